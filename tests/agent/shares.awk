# Sampled shares against exact ones (tests/agent/stackvm.test.sh, tests/lua/lua.test.sh):
# awk -v counts=FILE -f shares.awk FOLDED. counts holds "FUNCTION INSTRUCTIONS" lines;
# among the samples whose leaf frame is one of those functions, each one's share agrees
# with its share of their instructions within a binomial bound: |p_sampled - p_exact| <=
# 4.5 sigma, sigma = sqrt(p (1 - p) / N), plus 2 points. Prints "ok N" or what disagrees.
# strip (a regular expression) is removed from leaf names first.
BEGIN { while ((getline l < counts) > 0) { split(l, a, " "); c[a[1]] = a[2]; tot += a[2]; nc++ } }
{
	n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); leaf = f[k]
	if (strip != "") sub(strip, "", leaf)
	if (leaf in c) { s[leaf] += n; N += n }
}
END {
	if (nc < 2) { print "only " nc " functions counted"; exit }
	if (N < 300) { print "only " N " samples"; exit }
	bad = ""
	for (fn in c) {
		pe = c[fn] / tot; ps = s[fn] / N
		bound = 4.5 * sqrt(pe * (1 - pe) / N) + 0.02
		d = ps - pe; if (d < 0) d = -d
		if (d > bound) bad = bad sprintf("%s: sampled %.4f exact %.4f bound %.4f; ", fn, ps, pe, bound)
	}
	print bad == "" ? "ok " N : bad
}
