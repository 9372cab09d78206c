// Runs many fixtures in LiteSVM (fixture.mjs) in one process, one JSON line each, in the
// order given: the outcome, or {"error": "..."} when LiteSVM refused the fixture (a
// program it would not load, say), so that one refusal does not end the batch. The
// differential fuzzer (fuzz/sbpf_diff.py) reads them. Paths come one a line on stdin.
import { readFileSync } from 'node:fs';
import { runFixture, toJson } from './fixture.mjs';

for (const path of readFileSync(0, 'utf8').split('\n').filter((p) => p)) {
	let line;
	try {
		line = toJson(runFixture(path));
	} catch (e) {
		line = JSON.stringify({ error: String(e.message ?? e).split('\n')[0] });
	}
	console.log(line);
}
