// Writes a plain (not gzipped) pprof profile.proto from a JSON description, with an encoder
// of our own written from the profile.proto schema, so annotate's input does not come from
// tally itself. usage: node annotate_pprof.js IN.json OUT.pb
// IN: { binary, build_id, start, [limit, offset,] samples: [{ stack: [{ addr, func, inlined }],
// value }] }, stack innermost first, addr relative to the mapping's start (its location's
// address is start + addr); the mapping is [start, limit) at file offset `offset` (default
// [start, start + 16 MiB) at 0: then addr is a file offset, and a vaddr where they agree),
// inlined (optional) the functions inlined at addr, innermost first: they become the
// location's first Line entries, as pprof represents inline frames.
"use strict";
const fs = require("fs");
const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

function varint(n) {
	let v = BigInt(n);
	const out = [];
	do {
		let b = Number(v & 0x7fn);
		v >>= 7n;
		if (v) b |= 0x80;
		out.push(b);
	} while (v);
	return Buffer.from(out);
}
const key = (num, wire) => varint((num << 3) | wire);
const uint = (num, v) => Buffer.concat([key(num, 0), varint(v)]);
const bytes = (num, b) => Buffer.concat([key(num, 2), varint(b.length), b]);
const msg = (num, parts) => bytes(num, Buffer.concat(parts));

const strings = [""];
const str = (s) => { let i = strings.indexOf(s); if (i < 0) { i = strings.length; strings.push(s); } return i; };

const parts = [msg(1, [uint(1, str("samples")), uint(2, str("count"))])];
const start = BigInt(spec.start);
const limit = spec.limit ? BigInt(spec.limit) : start + 0x1000000n;
parts.push(msg(3, [uint(1, 1), uint(2, start), uint(3, limit), uint(4, BigInt(spec.offset || 0)),
	uint(5, str(spec.binary)), uint(6, str(spec.build_id))]));
const funcs = new Map(), locs = new Map();
for (const s of spec.samples) {
	const ids = s.stack.map(({ addr, func, inlined }) => {
		const names = func ? [...(inlined || []), func] : []; /* no func: address only */
		for (const f of names) {
			if (!funcs.has(f)) {
				funcs.set(f, funcs.size + 1);
				parts.push(msg(5, [uint(1, funcs.get(f)), uint(2, str(f)), uint(3, str(f))]));
			}
		}
		const k = `${addr}:${names.join(";")}`;
		if (!locs.has(k)) {
			locs.set(k, locs.size + 1);
			parts.push(msg(4, [uint(1, locs.get(k)), uint(2, 1), uint(3, start + BigInt(addr)),
				...names.map((f) => msg(4, [uint(1, funcs.get(f))]))]));
		}
		return locs.get(k);
	});
	parts.push(msg(2, [bytes(1, Buffer.concat(ids.map(varint))), bytes(2, varint(s.value))]));
}
for (const s of strings)
	parts.push(bytes(6, Buffer.from(s, "utf8")));
fs.writeFileSync(process.argv[3], Buffer.concat(parts));
