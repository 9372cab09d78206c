// Symbolizer corpus, C++: names that only demangling makes readable (namespaces, templates,
// overloads, operators, lambdas, virtual functions, an anonymous namespace) and inline member
// functions, so the comparison covers llvm-symbolizer's demangled output. No standard
// headers: only the compiler's own output matters.

volatile int cxx_sink;

namespace geom {

template <typename T> struct vec2 {
	T x, y;
	vec2 operator+(const vec2 &o) const { return { x + o.x, y + o.y }; }
	T dot(const vec2 &o) const { return x * o.x + y * o.y; }
};

struct shape {
	virtual ~shape() {}
	virtual int area() const = 0;
};

struct rect : shape {
	int w, h;
	rect(int w_, int h_) : w(w_), h(h_) {}
	int area() const override { return w * h; }
};

struct square : rect {
	explicit square(int s) : rect(s, s) {}
	int area() const override { return rect::area() + (cxx_sink & 1); }
};

__attribute__((noinline)) int scale(int v) { return v * 3 + cxx_sink; }
__attribute__((noinline)) long scale(long v) { return v * 5 + cxx_sink; }
__attribute__((noinline)) double scale(double v) { return v * 0.5 + cxx_sink; }

} // namespace geom

namespace {

template <int N> struct unroll {
	static inline int run(int v) { return unroll<N - 1>::run(v * 2 + N) ^ N; }
};
template <> struct unroll<0> {
	static inline int run(int v) { return v + cxx_sink; }
};

template <typename F> __attribute__((noinline)) int apply_twice(F f, int v)
{
	return f(f(v));
}

} // namespace

int main(int argc, char **)
{
	geom::vec2<int> a{ argc, 2 }, b{ 3, argc };
	int total = (a + b).dot(b);
	geom::vec2<double> c{ 0.5, argc * 1.5 };
	total += (int)(c + c).dot(c);

	geom::rect r(argc, 4);
	geom::square s(argc + 1);
	geom::shape *shapes[] = { &r, &s };
	for (geom::shape *p : shapes)
		total += p->area();

	total += geom::scale(argc) + (int)geom::scale((long)argc) + (int)geom::scale(argc * 1.0);
	total += unroll<6>::run(argc);
	int k = argc;
	total += apply_twice([k](int v) { return v * k + 1; }, total);
	total += apply_twice([](int v) { return v - 7; }, total);
	cxx_sink = total;
	return 0;
}
