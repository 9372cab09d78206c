# The CU profile across CPI of a deployed program: SPL Associated Token Account's Create,
# which invokes SPL Token (GetAccountDataSize, InitializeImmutableOwner, InitializeAccount3)
# and the System program (CreateAccount). LiteSVM (agave's runtime) is the oracle: its CU is
# the profile's total, each Token invoke's "consumed N" is what Token's frames under the
# invoke syscall hold, each System invoke it logs has a program:system_program frame under
# the syscall holding what the System builtin costs in LiteSVM (the CU of a System Transfer
# run as the transaction's instruction: the builtin logs no "consumed" line), and its
# invoke lines count the invokes whose cost (agave's invoke_units, 946) the syscall frames
# hold.
. tests/lib.sh

DIR="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/programs"
if [ ! -f "$DIR/SOURCES.md" ]; then
	skip sbpf_cpi_profile "no corpus at $DIR"
	exit 0
fi
. tests/solana/litesvm/oracle.sh
litesvm_ready sbpf_cpi_profile || exit 0

mkdir -p "$TMP/fx"
cp "$ROOT/tests/solana/fixtures/spl_ata_create.json" "$TMP/fx/"
ln -s "$DIR" "$TMP/fx/programs"
fx=$TMP/fx/spl_ata_create.json
if ! node "$LITESVM/fixture.mjs" "$fx" >"$TMP/litesvm.json" 2>"$TMP/litesvm.err"; then
	fail sbpf_cpi_profile "LiteSVM: $(tail -3 "$TMP/litesvm.err")"
	exit 0
fi
# The System builtin's cost: a Transfer between the fixture's system accounts, on its own.
python3 - "$fx" "$TMP/fx/system_transfer.json" <<'EOF'
import json, sys
fx = json.load(open(sys.argv[1]))
payer, dest = 'ArBY5Mui2E27kM5Lb4VvhHUJCQkJjggJoJufH3v2vPwW', '3x9az88Dkbxa6tkKByxqEn7jBTJCJCD4dVvou49L24ET'
json.dump({'programs': [], 'accounts': [a for a in fx['accounts'] if a['pubkey'] in (payer, dest)],
           'instruction': {'program_id': '11111111111111111111111111111111',
                           'accounts': [{'pubkey': payer, 'is_signer': True, 'is_writable': True},
                                        {'pubkey': dest, 'is_signer': False, 'is_writable': True}],
                           'data': '02000000' + (1000).to_bytes(8, 'little').hex()}},
          open(sys.argv[2], 'w'))
EOF
if ! node "$LITESVM/fixture.mjs" "$TMP/fx/system_transfer.json" >"$TMP/system.json" 2>"$TMP/litesvm.err"; then
	fail sbpf_cpi_profile "LiteSVM (System Transfer): $(tail -3 "$TMP/litesvm.err")"
	exit 0
fi
out=$("$TALLY" sbpf run "$fx" --folded "$TMP/ata.folded" 2>&1) ||
	fail sbpf_cpi_profile_run "$out"

# check_profile WHAT: one assertion on the folded profile against LiteSVM's outcome.
check_profile() {
	python3 - "$1" "$TMP/ata.folded" "$TMP/litesvm.json" "$TMP/system.json" <<'EOF'
import json, re, sys
what, folded, oracle, system_oracle = sys.argv[1:]
TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'
SYSTEM = '11111111111111111111111111111111'
INVOKE = 'syscall:sol_invoke_signed_rust'
lv = json.load(open(oracle))
logs = lv['logs']
stacks = []
for line in open(folded):
    stack, cu = line.rsplit(' ', 1)
    stacks.append((stack.split(';'), int(cu)))
total = sum(cu for _, cu in stacks)
# The Token invokes' own CU, in order, and how many invokes of each program at depth 2.
consumed = [int(m.group(1)) for l in logs
            for m in [re.fullmatch('Program %s consumed (\\d+) of \\d+ compute units' % TOKEN, l)] if m]
invokes = {p: sum(l == 'Program %s invoke [2]' % p for l in logs) for p in (TOKEN, SYSTEM)}
assert invokes[TOKEN] == 3 and invokes[SYSTEM] == 1 and len(consumed) == 3, (invokes, consumed)

def under_invoke(frames):
    return INVOKE in frames[:-1]

if what == 'total':
    assert lv['result'] == 'success' and total == lv['compute_units'], (total, lv['compute_units'])
elif what == 'ata_frames':
    # ATA's own frames, from its entrypoint, hold what no invoke holds; no Token frame is
    # outside the invoke syscall's `program:spl_token`.
    own = [f for f, _ in stacks if not under_invoke(f)]
    assert all(f[0] == 'entrypoint' for f, _ in stacks)
    assert any(x.startswith('spl_associated_token_account') for f in own for x in f)
    for f, _ in stacks:
        tok = [i for i, x in enumerate(f) if x.startswith('spl_token')]
        if tok:
            p = f.index('program:spl_token')
            assert f[p - 1] == INVOKE and p < tok[0], f
            assert not any(x.startswith('spl_associated') for x in f[p:]), f
elif what == 'token_under_invoke':
    # Per invoke site (the stack down to the syscall), Token's frames hold the consumed CU
    # of one or more consecutive Token invokes, and all of them together.
    sites = {}
    for f, cu in stacks:
        if 'program:spl_token' in f:
            p = f.index('program:spl_token')
            sites[tuple(f[:p])] = sites.get(tuple(f[:p]), 0) + cu
    runs = {sum(consumed[i:j]) for i in range(3) for j in range(i + 1, 4)}
    assert sum(sites.values()) == sum(consumed), (sites, consumed)
    assert all(v in runs for v in sites.values()), (sites, runs)
elif what == 'system_frame':
    # The System builtin's frame: a leaf right under the invoke syscall, holding the
    # builtin's cost once per System invoke LiteSVM logs (and each of those succeeded).
    sv = json.load(open(system_oracle))
    assert sv['result'] == 'success' and sv['compute_units'] > 0, sv
    assert sum(l == 'Program %s success' % SYSTEM for l in logs) == invokes[SYSTEM], logs
    sys_stacks = [(f, cu) for f, cu in stacks if 'program:system_program' in f]
    assert sys_stacks and all(f[-1] == 'program:system_program' and f[-2] == INVOKE
                              for f, _ in sys_stacks), sys_stacks
    assert sum(cu for _, cu in sys_stacks) == invokes[SYSTEM] * sv['compute_units'], \
        (sys_stacks, sv['compute_units'])
elif what == 'invoke_cost':
    # The syscall frames' own CU: 946 per invoke and the CPI's per-byte charges, which are
    # a few CU for these small instructions and accounts; the System builtin's cost is in
    # its own frame, not the syscall's.
    own = {tuple(f): cu for f, cu in stacks if f[-1] == INVOKE}
    floor = 946 * (invokes[TOKEN] + invokes[SYSTEM])
    assert floor <= sum(own.values()) <= floor + 8, (own, floor)
    system_site = [cu for f, cu in own.items()
                   if any(g == list(f) + ['program:system_program'] for g, _ in stacks)]
    assert len(system_site) == 1 and 946 <= system_site[0] <= 946 + 8, own
EOF
}

for what in total ata_frames token_under_invoke system_frame invoke_cost; do
	check "sbpf_cpi_profile_$what" check_profile "$what"
done
