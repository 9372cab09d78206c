// Drives a tally flame graph SVG in headless Chromium (through playwright-core) the way a
// person would: hover, click to zoom, reset, search; and takes a screenshot whose pixels are
// checked. Prints "PASS: name" / "FAIL: name: why" lines for tests/lib.sh.
//
// usage: node flamegraph_browser.js PLAYWRIGHT_DIR PROFILE_DIR SPEC.json
// SPEC: { svg, folded, screenshot, total, zoom, zoom_child, sibling, hover, search,
//         matched_pct, inverted }
// where folded is the input the SVG was drawn from (the oracle for every frame's weight),
// zoom is a frame name to click, zoom_child one of its callees, sibling a frame outside its
// subtree, and matched_pct the share the search regex must report.
"use strict";
const path = require("path");
const fs = require("fs");
const [pwDir, profileDir, specPath] = process.argv.slice(2);
const { chromium } = require(path.join(pwDir, "node_modules", "playwright-core"));
const spec = JSON.parse(fs.readFileSync(specPath, "utf8"));
const base = path.basename(spec.svg, ".svg");

let failed = 0;
function result(name, ok, why) {
	if (ok) {
		console.log(`PASS: ${base}_${name}`);
	} else {
		failed++;
		console.log(`FAIL: ${base}_${name}: ${why}`);
	}
}
const near = (a, b, tol) => Math.abs(a - b) <= tol;

// Geometry and state of the frame whose name (first line of its <title>) is `name`.
async function frame(page, name) {
	return page.evaluate((n) => {
		for (const g of document.querySelectorAll("#frames > g")) {
			if (g.querySelector("title").textContent.split("\n")[0] !== n)
				continue;
			const r = g.querySelector("rect");
			return { x: +r.getAttribute("x"), y: +r.getAttribute("y"),
				width: +r.getAttribute("width"), fill: r.getAttribute("fill"),
				shown: getComputedStyle(g).display !== "none",
				anc: g.classList.contains("anc"), label: g.querySelector("text").textContent,
				w: +g.getAttribute("data-w") };
		}
		return null;
	}, name);
}

async function clickFrame(page, name) {
	const f = await frame(page, name);
	// A real mouse click in the middle of the box, as a person would.
	await page.mouse.click(f.x + Math.min(f.width / 2, 20), f.y + 7);
}

// Decodes the PNG in an HTML page (through a canvas) and returns size and some pixels.
async function pixels(page, png, points) {
	const url = "data:image/png;base64," + png.toString("base64");
	return page.evaluate(async ({ url, points }) => {
		const img = new Image();
		img.src = url;
		await img.decode();
		const c = document.createElement("canvas");
		c.width = img.width;
		c.height = img.height;
		const ctx = c.getContext("2d");
		ctx.drawImage(img, 0, 0);
		const data = ctx.getImageData(0, 0, img.width, img.height).data;
		const colours = new Set();
		for (let i = 0; i < data.length; i += 4)
			colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
		const at = points.map(([x, y]) => {
			const i = (Math.round(y) * img.width + Math.round(x)) * 4;
			return [data[i], data[i + 1], data[i + 2]];
		});
		return { width: img.width, height: img.height, colours: colours.size, at };
	}, { url, points });
}

// Weight of every path (root "all" first) in folded stacks, tally's suffixes removed.
function foldedWeights(text) {
	const want = new Map();
	for (const line of text.split("\n")) {
		const sp = line.lastIndexOf(" ");
		if (sp < 0)
			continue;
		const n = +line.slice(sp + 1);
		let p = "all";
		want.set(p, (want.get(p) || 0) + n);
		for (const f of line.slice(0, sp).split(";")) {
			p += ";" + f.replace(/_\[[ik]\]$/, "");
			want.set(p, (want.get(p) || 0) + n);
		}
	}
	return want;
}

const hex = (s) => [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16));
const sameColour = (a, b) => a.every((v, i) => Math.abs(v - b[i]) <= 3);

async function main() {
	const context = await chromium.launchPersistentContext(profileDir, {
		executablePath: "/usr/bin/chromium",
		headless: true,
		args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run"],
		viewport: { width: 1200, height: 800 },
	});
	const page = await context.newPage();
	const errors = [];
	page.on("pageerror", (e) => errors.push(e.message));
	page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
	let dialogAnswer = "";
	page.on("dialog", (d) => d.accept(dialogAnswer));

	await page.goto("file://" + path.resolve(spec.svg));
	const ready = await page.evaluate(() => document.documentElement.getAttribute("data-ready"));
	result("loads_without_script_error", ready === "1" && errors.length === 0,
		`ready=${ready} errors=${JSON.stringify(errors)}`);

	// Well-formed XML: DOMParser (in an HTML page) reports errors as <parsererror>.
	const blank = await context.newPage();
	const parseErrors = await blank.evaluate((t) => new DOMParser()
		.parseFromString(t, "image/svg+xml").getElementsByTagName("parsererror").length,
		fs.readFileSync(spec.svg, "utf8"));
	result("is_well_formed_xml", parseErrors === 0, `${parseErrors} parser errors`);

	// Every frame's weight is its path's weight in the input, and no path is missing.
	const got = await page.evaluate(() => {
		const C = window.TALLY_FG, path = [], out = [];
		for (const g of document.querySelectorAll("#frames > g")) {
			const row = Math.round((+g.querySelector("rect").getAttribute("y") - C.top) / C.fh);
			const depth = C.inverted ? row : C.maxdepth - row;
			path.length = depth;
			path.push(g.querySelector("title").textContent.split("\n")[0]);
			out.push([path.join(";"), +g.getAttribute("data-w")]);
		}
		return out;
	});
	const want = foldedWeights(fs.readFileSync(spec.folded, "utf8"));
	const wrong = got.filter(([p, w]) => want.get(p) !== w);
	result("frame_weights_match_folded_input", wrong.length === 0 && got.length === want.size,
		`${got.length} frames, ${want.size} paths; wrong: ${JSON.stringify(wrong.slice(0, 3))}`);

	const full = 1200 - 2 * 10;
	const root = await frame(page, "all");
	const z0 = await frame(page, spec.zoom), child0 = await frame(page, spec.zoom_child);
	const main0 = await frame(page, spec.sibling);
	result("root_spans_full_width", root && near(root.width, full, 0.01) && root.w === spec.total,
		JSON.stringify(root));
	if (spec.inverted !== undefined) {
		const below = await frame(page, spec.zoom);
		result("orientation", spec.inverted ? root.y < below.y : root.y > below.y,
			`root y ${root.y}, ${spec.zoom} y ${below.y}`);
	}

	// Hover shows the full name, the weight and the share.
	const h = await frame(page, spec.hover);
	await page.mouse.move(h.x + 2, h.y + 7);
	const details = await page.textContent("#details");
	const share = (100 * h.w / spec.total).toFixed(2) + "%";
	result("hover_shows_name_weight_share",
		details.includes(spec.hover) && details.includes(h.w.toLocaleString("en-US")) &&
		details.includes(share), `details "${details}", wanted ${spec.hover} ${h.w} ${share}`);

	// Click zooms: the frame spans the width, its callees scale with it, its callers are
	// dimmed at full width, and frames outside its subtree are hidden.
	await clickFrame(page, spec.zoom);
	const z1 = await frame(page, spec.zoom), child1 = await frame(page, spec.zoom_child);
	const sib1 = await frame(page, spec.sibling), root1 = await frame(page, "all");
	const wantChild = child0.width * full / z0.width;
	result("click_zooms_into_frame",
		near(z1.width, full, 0.02) && near(z1.x, 10, 0.02) && near(child1.width, wantChild, 0.05) &&
		!sib1.shown && root1.anc && root1.shown,
		`zoomed ${JSON.stringify(z1)} child ${child1.width} (want ${wantChild}) sibling shown ${sib1.shown} root ${JSON.stringify(root1)}`);
	const c1 = await frame(page, spec.zoom_child);
	await page.mouse.move(c1.x + 2, c1.y + 7);
	const zdetails = await page.textContent("#details");
	const zshare = (100 * c1.w / z1.w).toFixed(2);
	result("zoomed_hover_shows_share_of_zoomed_frame", zdetails.includes(`(${zshare}% of ${spec.zoom})`),
		`"${zdetails}" wanted ${zshare}% of ${spec.zoom}`);
	result("zoom_relabels_frames", child1.label.length >= child0.label.length,
		`child label "${child0.label}" -> "${child1.label}"`);
	const resetShown = await page.evaluate(() => getComputedStyle(document.getElementById("reset")).display);
	result("reset_button_appears", resetShown !== "none", resetShown);

	await page.click("#reset");
	const z2 = await frame(page, spec.zoom), sib2 = await frame(page, spec.sibling);
	result("reset_restores_layout", near(z2.width, z0.width, 0.02) && near(z2.x, z0.x, 0.02) &&
		sib2.shown && near(sib2.width, main0.width, 0.02), JSON.stringify({ z2, sib2 }));

	// Search: highlight matches, report the share they cover (nested matches once).
	dialogAnswer = spec.search;
	await page.click("#search");
	const matched = await page.textContent("#matched");
	const m = await frame(page, spec.zoom_child);
	result("search_reports_matched_share",
		matched.includes(`Matched: ${spec.matched_pct}%`), `"${matched}" want ${spec.matched_pct}%`);
	result("search_highlights_matches", m.fill === "#e535d0", m.fill);
	await page.click("#search");
	const m2 = await frame(page, spec.zoom_child);
	const cleared = await page.textContent("#matched");
	result("search_clears", m2.fill === child0.fill && cleared === "", `${m2.fill} "${cleared}"`);
	dialogAnswer = "(";
	await page.click("#search");
	result("bad_regex_is_reported", (await page.textContent("#matched")).includes("bad regular expression"),
		await page.textContent("#matched"));

	// ?s=REGEX in the URL searches on load.
	await page.goto("file://" + path.resolve(spec.svg) + "?s=" + encodeURIComponent(spec.search));
	const fromUrl = await page.textContent("#matched");
	result("url_search_parameter", fromUrl.includes(`Matched: ${spec.matched_pct}%`), fromUrl);

	// Screenshot: the right size, a picture (many colours), the root box in its colour.
	await page.keyboard.press("Escape");
	await page.mouse.move(0, 0);
	const size = await page.evaluate(() => [document.documentElement.width.baseVal.value,
		document.documentElement.height.baseVal.value]);
	await page.setViewportSize({ width: size[0], height: size[1] });
	const png = await page.screenshot({ path: spec.screenshot });
	const shot = await pixels(blank, png, [[root.x + 300, root.y + 7], [3, 3]]);
	result("screenshot_shows_the_graph",
		shot.width === size[0] && shot.height === size[1] && shot.colours >= 8 &&
		sameColour(shot.at[0], hex(root.fill)) && sameColour(shot.at[1], hex("#fbfaf7")),
		JSON.stringify({ shot, size, rootFill: root.fill }));
	result("no_script_errors_during_use", errors.length === 0, JSON.stringify(errors));
	await context.close();
}

main().catch((e) => {
	console.log(`FAIL: ${base}_browser: ${e.stack.split("\n").slice(0, 3).join(" ")}`);
	process.exit(1);
});
