// Opens a tally annotate --html page in headless Chromium (playwright-core) and checks what
// a person sees: no errors, one row per instruction, the hottest instruction anchored and
// shaded strongest, instructions without weight unshaded. Prints PASS/FAIL lines.
// usage: node annotate_browser.js PLAYWRIGHT_DIR PROFILE_DIR PAGE.html HOT_ADDR NROWS
"use strict";
const path = require("path");
const [pwDir, profileDir, page, hot, nrows] = process.argv.slice(2);
const { chromium } = require(path.join(pwDir, "node_modules", "playwright-core"));

function result(name, ok, why) {
	console.log(ok ? `PASS: ${name}` : `FAIL: ${name}: ${why}`);
}

(async () => {
	const context = await chromium.launchPersistentContext(profileDir, {
		executablePath: "/usr/bin/chromium",
		headless: true,
		args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run"],
	});
	const p = await context.newPage();
	const errors = [];
	p.on("pageerror", (e) => errors.push(e.message));
	p.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
	const requests = [];
	p.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
	await p.goto("file://" + path.resolve(page));
	const s = await p.evaluate(() => {
		const rows = [...document.querySelectorAll("tbody tr[data-addr]")];
		const bg = (r) => getComputedStyle(r).backgroundColor;
		const hot = document.getElementById("hottest");
		const cold = rows.filter((r) => r.dataset.w === "0");
		const transparent = (c) => c === "rgba(0, 0, 0, 0)" || c === "transparent";
		return { rows: rows.length, hot: hot && hot.dataset.addr, hotBg: hot && bg(hot),
			coldShaded: cold.filter((r) => !transparent(bg(r))).length,
			hotBold: hot && getComputedStyle(hot.cells[4]).fontWeight,
			link: !!document.querySelector('a[href="#hottest"]') };
	});
	result("annotate_html_loads_cleanly", errors.length === 0 && requests.length === 0,
		JSON.stringify({ errors, requests }));
	result("annotate_html_has_a_row_per_instruction", s.rows === +nrows, `${s.rows} rows, want ${nrows}`);
	result("annotate_html_highlights_hottest",
		s.hot === hot && s.hotBg !== "rgba(0, 0, 0, 0)" && +s.hotBold >= 700 && s.link && s.coldShaded === 0,
		JSON.stringify(s));
	await context.close();
})().catch((e) => {
	console.log(`FAIL: annotate_html_browser: ${e.message.split("\n")[0]}`);
	process.exit(1);
});
