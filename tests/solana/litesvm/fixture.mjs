// Runs tally's fixtures (docs/sbpf.md, "Fixtures") in LiteSVM, the Solana runtime as a
// library (agave's program runtime and sBPF VM): the oracle tally's runtime is compared
// with. Needs NODE_PATH naming the folder that holds the `litesvm` npm package.
//
// Each fixture becomes one legacy transaction of one instruction, paid by a fee payer of
// its own (not one of the fixture's accounts, so their balances are the instruction's
// alone), with signature verification and the blockhash check off. The outcome is printed
// as `tally sbpf run FIXTURE --json` prints it: result (the InstructionError's name,
// Custom(N), or the TransactionError's when the transaction failed before its
// instruction), compute units, the framed log, return data, and the post-state of the
// fixture's accounts other than its programs (a zero-lamport account no longer exists:
// it reads as the runtime's default account).

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const require = createRequire(import.meta.url);
const lite = require('litesvm/dist/internal.js');

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function b58decode(s) {
	let n = 0n;
	for (const c of s) {
		const d = ALPHABET.indexOf(c);
		if (d < 0)
			throw new Error(`not base58: ${s}`);
		n = n * 58n + BigInt(d);
	}
	const out = [];
	for (; n > 0n; n >>= 8n)
		out.unshift(Number(n & 0xffn));
	for (const c of s) {
		if (c !== '1')
			break;
		out.unshift(0);
	}
	if (out.length !== 32)
		throw new Error(`not a 32-byte key: ${s}`);
	return Uint8Array.from(out);
}

export function b58encode(bytes) {
	let n = 0n;
	for (const b of bytes)
		n = n * 256n + BigInt(b);
	let s = '';
	for (; n > 0n; n /= 58n)
		s = ALPHABET[Number(n % 58n)] + s;
	for (const b of bytes) {
		if (b !== 0)
			break;
		s = '1' + s;
	}
	return s;
}

export function bytesOf(v) {
	if (v === undefined || v === null)
		return new Uint8Array(0);
	if (v.startsWith('base64:'))
		return Uint8Array.from(Buffer.from(v.slice(7), 'base64'));
	return Uint8Array.from(Buffer.from(v, 'hex'));
}

const hex = (b) => Buffer.from(b).toString('hex');

const SYSTEM = '11111111111111111111111111111111';
// A key no fixture uses: sha256("tally fixture fee payer") would do as well; any 32 bytes
// are a valid address once signatures are not verified.
const FEE_PAYER = Uint8Array.from(Buffer.from('tally fixture fee payer.........'));

// compact-u16, the length prefix of every array in a transaction.
function shortvec(n) {
	const out = [];
	do {
		let b = n & 0x7f;
		n >>= 7;
		if (n)
			b |= 0x80;
		out.push(b);
	} while (n);
	return out;
}

// The message's account keys in the runtime's order (writable signers, read-only signers,
// writable others, read-only others), each key once with its privileges merged.
function messageKeys(ix) {
	const keys = new Map();
	const add = (k58, signer, writable) => {
		const k = keys.get(k58) ?? { k58, signer: false, writable: false };
		k.signer ||= signer;
		k.writable ||= writable;
		keys.set(k58, k);
	};
	add(b58encode(FEE_PAYER), true, true);
	for (const a of ix.accounts ?? [])
		add(a.pubkey, !!a.is_signer, !!a.is_writable);
	add(ix.program_id, false, false);
	const rank = (k) => (k.signer ? 0 : 2) + (k.writable ? 0 : 1);
	const list = [...keys.values()];
	// Stable: the fee payer stays first, the rest keep the instruction's order.
	return list.map((k, i) => [k, i]).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1])
		.map(([k]) => k);
}

export function legacyTransaction(ix, blockhash) {
	const keys = messageKeys(ix);
	const index = new Map(keys.map((k, i) => [k.k58, i]));
	const signers = keys.filter((k) => k.signer);
	const msg = [signers.length, signers.filter((k) => !k.writable).length,
		keys.filter((k) => !k.signer && !k.writable).length];
	msg.push(...shortvec(keys.length));
	for (const k of keys)
		msg.push(...b58decode(k.k58));
	msg.push(...b58decode(blockhash));
	const data = bytesOf(ix.data);
	const accounts = (ix.accounts ?? []).map((a) => index.get(a.pubkey));
	msg.push(...shortvec(1), index.get(ix.program_id), ...shortvec(accounts.length), ...accounts,
		...shortvec(data.length), ...data);
	return Uint8Array.from([...shortvec(signers.length), ...new Array(64 * signers.length).fill(0),
		...msg]);
}

// The native module's fieldless error enums are numbers at run time (TypeScript const
// enums): their names are read from the package's own declarations.
function enumNames(name) {
	const dts = readFileSync(require.resolve('litesvm/dist/internal.d.ts'), 'utf8');
	const body = dts.match(new RegExp(`const enum ${name} \\{([^}]*)\\}`));
	if (!body)
		throw new Error(`litesvm declares no ${name}`);
	const names = [];
	for (const m of body[1].matchAll(/(\w+) = (\d+)/g))
		names[Number(m[2])] = m[1];
	return names;
}

function errorName(err) {
	if (typeof err === 'number')
		return enumNames('TransactionErrorFieldless')[err] ?? `TransactionError(${err})`;
	if (err instanceof lite.TransactionErrorInstructionError) {
		const ie = err.err();
		if (typeof ie === 'number')
			return enumNames('InstructionErrorFieldless')[ie] ?? `InstructionError(${ie})`;
		if (ie instanceof lite.InstructionErrorCustom)
			return `Custom(${ie.code})`;
		return `BorshIoError`;
	}
	return err.constructor.name.replace(/^TransactionError/, '');
}

const LOADERS = {
	BPFLoader1111111111111111111111111111111111: true,
	BPFLoader2111111111111111111111111111111111: true,
	BPFLoaderUpgradeab1e11111111111111111111111: true,
};

// Loads the fixture into a fresh LiteSVM; returns the runtime, or throws.
function setUp(fx, dir) {
	const svm = new lite.LiteSvm();
	svm.setSigverify(false);
	svm.setBlockhashCheck(false);
	svm.setTransactionHistory(0n);
	const programs = new Set();
	const listed = new Map((fx.accounts ?? []).map((a) => [a.pubkey, a]));
	for (const p of fx.programs) {
		if (p.elf.endsWith('.o'))
			throw new Error(`${p.elf}: an object; LiteSVM loads programs: tally sbpf link it first`);
		const elf = readFileSync(resolve(dir, p.elf));
		const owner = listed.get(p.id)?.owner;
		if (owner && LOADERS[owner])
			svm.addProgramWithLoader(b58decode(p.id), elf, b58decode(owner));
		else
			svm.addProgram(b58decode(p.id), elf);
		programs.add(p.id);
	}
	for (const a of fx.accounts ?? []) {
		if (programs.has(a.pubkey))
			continue;
		svm.setAccount(b58decode(a.pubkey), new lite.Account(BigInt(a.lamports), bytesOf(a.data),
			b58decode(a.owner), !!a.executable, BigInt(a.rent_epoch ?? 0)));
	}
	svm.setAccount(FEE_PAYER, new lite.Account(1000000000000n, new Uint8Array(0),
		b58decode(SYSTEM), false, 0n));
	const sv = fx.sysvars ?? {};
	// A field the fixture leaves out keeps the runtime's default.
	if (sv.clock) {
		const c = sv.clock;
		const d = svm.getClock();
		const v = (x, def) => (x === undefined ? def : BigInt(x));
		svm.setClock(new lite.Clock(v(c.slot, d.slot), v(c.epoch_start_timestamp, d.epochStartTimestamp),
			v(c.epoch, d.epoch), v(c.leader_schedule_epoch, d.leaderScheduleEpoch),
			v(c.unix_timestamp, d.unixTimestamp)));
	}
	if (sv.rent) {
		const def = svm.getRent();
		const r = sv.rent;
		svm.setRent(new lite.Rent(BigInt(r.lamports_per_byte_year ?? def.lamportsPerByteYear),
			r.exemption_threshold ?? def.exemptionThreshold,
			r.burn_percent ?? def.burnPercent));
	}
	if (fx.compute_budget !== undefined) {
		const cb = new lite.ComputeBudget();
		cb.computeUnitLimit = BigInt(fx.compute_budget);
		svm.setComputeBudget(cb);
	}
	return { svm, programs };
}

function accountState(svm, k58) {
	const a = svm.getAccount(b58decode(k58));
	if (!a || a.lamports() === 0n)
		return { pubkey: k58, owner: SYSTEM, lamports: 0, data: '', executable: false,
			 rent_epoch: 0 };
	return { pubkey: k58, owner: b58encode(a.owner()), lamports: a.lamports(),
		 data: hex(a.data()), executable: a.executable(), rent_epoch: a.rentEpoch() };
}

// JSON with u64s as exact integers (JSON.stringify has no BigInt).
export function toJson(v) {
	return JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `@u64:${x}` : x))
		.replace(/"@u64:(\d+)"/g, '$1');
}

export function runFixture(path) {
	const fx = JSON.parse(readFileSync(path, 'utf8'));
	const { svm, programs } = setUp(fx, dirname(path));
	const tx = legacyTransaction(fx.instruction, svm.latestBlockhash());
	const res = svm.sendLegacyTransaction(tx);
	const failed = res instanceof lite.FailedTransactionMetadata;
	const meta = failed ? res.meta() : res;
	const out = {
		result: failed ? errorName(res.err()) : 'success',
		compute_units: Number(meta.computeUnitsConsumed()),
		logs: meta.logs(),
		return_data: hex(meta.returnData().data()),
		accounts: (fx.accounts ?? []).filter((a) => !programs.has(a.pubkey))
			.map((a) => accountState(svm, a.pubkey)),
	};
	return out;
}

if (process.argv[1] && import.meta.url === new URL(`file://${resolve(process.argv[1])}`).href) {
	for (const path of process.argv.slice(2))
		console.log(toJson(runFixture(path)));
}
