// Writes the `expect` of fixtures from LiteSVM (fixture.mjs), never from tally: result,
// compute units, the framed log, return data and every listed account's post-state.
//   node expect.mjs FIXTURE.json...          rewrite each fixture's expect
//   node expect.mjs --check FIXTURE.json...  exit 1, naming the fixture, when an expect
//                                            differs from what LiteSVM gives now
// Needs NODE_PATH naming the folder that holds the `litesvm` npm package.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { runFixture } from './fixture.mjs';

// u64s past 2^53 (a rent epoch of u64::MAX) are written as decimal strings: JSON numbers
// that large are not exact in JavaScript, and not integers at all to many JSON readers.
const u64 = (v) => (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString());

function expectFrom(out) {
	return {
		result: out.result,
		compute_units: out.compute_units,
		return_data: out.return_data,
		logs: out.logs,
		accounts: out.accounts.map((a) => ({
			pubkey: a.pubkey, owner: a.owner, lamports: u64(BigInt(a.lamports)), data: a.data,
			executable: a.executable, rent_epoch: u64(BigInt(a.rent_epoch)),
		})),
	};
}

const args = process.argv.slice(2);
const check = args[0] === '--check';
let bad = 0;
for (const path of check ? args.slice(1) : args) {
	const fx = JSON.parse(readFileSync(path, 'utf8'));
	const want = expectFrom(runFixture(path));
	if (check) {
		if (!isDeepStrictEqual(fx.expect, want)) {
			console.log(`${path}: expect differs from LiteSVM's: ${JSON.stringify(want)}`);
			bad++;
		}
		continue;
	}
	fx.expect = want;
	writeFileSync(`${path}.tmp`, JSON.stringify(fx, null, 2) + '\n');
	renameSync(`${path}.tmp`, path);
}
process.exit(bad ? 1 : 0);
