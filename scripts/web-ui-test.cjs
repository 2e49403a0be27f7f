// Drives headless Chromium over a running ferrobase's info port (see
// scripts/web-ui-test.sh): node web-ui-test.cjs INFO_URL TABLE REGIONS SHOT_DIR.
// Exits non-zero, saying what differed, when a check fails.
"use strict";
const { chromium } = require("playwright-core");

const [info, table, regionsText, shots] = process.argv.slice(2);
const regions = Number(regionsText);

let passed = 0;
function check(ok, what) {
  if (!ok) {
    throw new Error("web UI check failed: " + what);
  }
  passed += 1;
  console.log("ok - " + what);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-background-networking", "--disable-gpu"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });

    await page.goto(info + "/master-status");
    const row = page.locator(`tr.table-row[data-table="${table}"]`);
    check((await row.count()) === 1, `master page lists table ${table}`);
    const shown = Number((await row.locator("td.region-count").innerText()).trim());
    check(shown === regions, `master page shows ${shown} regions, status 'detailed' says ${regions}`);
    await page.screenshot({ path: `${shots}/master-status.png`, fullPage: true });

    await row.locator("a").click();
    await page.waitForURL(/table\.jsp\?name=/);
    const regionRows = await page.locator("tr.region-row").count();
    check(regionRows === regions, `table page has ${regionRows} region rows, expected ${regions}`);
    const count = Number((await page.locator("#region-count").innerText()).trim());
    check(count === regions, `table page's region count ${count} is ${regions}`);
    await page.screenshot({ path: `${shots}/table.png`, fullPage: true });

    await page.goto(info + "/rs-status");
    const points = async () => Number((await page.locator("#chart").getAttribute("data-points")) || "0");
    await page.waitForFunction(() => Number(document.getElementById("chart").getAttribute("data-points") || "0") > 0,
      null, { timeout: 30000 });
    const first = await points();
    await page.waitForFunction((n) => Number(document.getElementById("chart").getAttribute("data-points") || "0") > n,
      first, { timeout: 30000 });
    const later = await points();
    check(later > first, `the chart gained points (${first} -> ${later})`);
    await page.screenshot({ path: `${shots}/rs-status.png`, fullPage: true });

    // With JavaScript off the tables are all there (server-rendered).
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const p2 = await plain.newPage();
    await p2.goto(info + "/master-status");
    check((await p2.locator(`tr.table-row[data-table="${table}"]`).count()) === 1,
      "master page lists the table with JavaScript off");
    const resp = await p2.goto(info + "/table.jsp?name=no_such_table");
    check(resp.status() === 404, `an unknown table answers 404 (got ${resp.status()})`);
    await plain.close();
  } finally {
    await browser.close();
  }
}

main().then(
  () => console.log(`web-ui: ${passed} passed, 0 failed`),
  (e) => {
    console.error(e && e.stack ? e.stack : String(e));
    process.exit(1);
  },
);
