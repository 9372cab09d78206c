# The CPython workload of the probes tests: calls, returns, lines, a class and an import.
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

class Counter:
    def __init__(self):
        self.n = 0
    def add(self, k):
        for i in range(k):
            self.n += i
        return self.n

c = Counter()
total = 0
for j in range(40):
    total += c.add(j) + fib(10)
import json
print(total, len(json.dumps({"a": list(range(100))})))
