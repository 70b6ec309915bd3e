import { BAR_DAYS } from '../uptime.ts';
import { shortDate } from './escape.ts';

/**
 * The page's stylesheet, inline: light and dark (`prefers-color-scheme`),
 * down to 360 px wide (the bar shows its last 30 days there). Bar days carry
 * no text of their own: a day's date comes from a custom property set per
 * column here, once per page, so a 100 % day is just `<i></i>` in the HTML.
 */
const BASE = `:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--mut:#59636e;--card:#f6f8fa;--line:#d1d9e0;--link:#0969da;
--ok:#2da44e;--a:#7bc96f;--b:#d4a72c;--c:#cf222e;--n:#d1d9e0;--tipbg:#1f2328;--tipfg:#fff;
--up-bg:#dafbe1;--up-fg:#116329;--down-bg:#ffebe9;--down-fg:#a40e26;--maint-bg:#ddf4ff;--maint-fg:#0550ae;--unk-bg:#eaeef2;--unk-fg:#3d444d}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mut:#9198a1;--card:#151b23;--line:#3d444d;--link:#4493f8;
--ok:#2ea043;--a:#56d364;--b:#bb8009;--c:#da3633;--n:#3d444d;--tipbg:#e6edf3;--tipfg:#0d1117;
--up-bg:#033a16;--up-fg:#7ee787;--down-bg:#490202;--down-fg:#ffa198;--maint-bg:#0c2d6b;--maint-fg:#a5d6ff;--unk-bg:#2a313c;--unk-fg:#d1d9e0}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--link)}
.wrap{max-width:56rem;margin:0 auto;padding:1rem}
header h1{font-size:1.6rem;margin:.5rem 0 0}
.desc,.note,footer{color:var(--mut)}
h2{font-size:1.15rem;margin:1.6rem 0 .6rem}
.banner{border-radius:8px;padding:.9rem 1.1rem;margin:1rem 0;color:#fff;background:#1a7f37}
.banner h2{margin:0;font-size:1.3rem}.banner p{margin:.2rem 0 0}
.banner.degraded{background:#9a6700}.banner.partial_outage{background:#bc4c00}.banner.major_outage{background:#cf222e}.banner.maintenance{background:#0969da}
.ann{border:1px solid var(--line);border-left:6px solid var(--maint-fg);border-radius:6px;padding:.6rem 1rem;margin:.6rem 0;background:var(--card)}
.ann.warning{border-left-color:var(--b)}.ann.problem{border-left-color:var(--c)}
.ann .kind{font-weight:600;margin:0}.ann p{margin:.25rem 0}.ann img{max-width:100%;height:auto}
ul{list-style:none;margin:0;padding:0}
.group ul{border:1px solid var(--line);border-radius:8px}
.res{padding:.7rem 1rem;border-top:1px solid var(--line)}.res:first-child{border-top:0}
.top{display:flex;justify-content:space-between;align-items:center;gap:.5rem}
.nm{font-weight:600;overflow-wrap:anywhere}
.st{border-radius:999px;padding:.05rem .6rem;font-size:.85rem;white-space:nowrap;background:var(--unk-bg);color:var(--unk-fg)}
.st.up{background:var(--up-bg);color:var(--up-fg)}.st.down{background:var(--down-bg);color:var(--down-fg)}
.st.maint{background:var(--maint-bg);color:var(--maint-fg)}
.bar{display:grid;grid-template-columns:repeat(${BAR_DAYS},1fr);gap:1px;height:28px;margin:.5rem 0 .2rem}
.bar i{position:relative;background:var(--ok);border-radius:1px}
.bar i.a{background:var(--a)}.bar i.b{background:var(--b)}.bar i.c{background:var(--c)}.bar i.n{background:var(--n)}
.bar i:focus{outline:2px solid var(--fg);outline-offset:1px}
.bar i:hover::after,.bar i:focus::after{content:var(--d) ": 100 %";position:absolute;bottom:calc(100% + 6px);left:50%;transform:translateX(-50%);
white-space:nowrap;background:var(--tipbg);color:var(--tipfg);font-size:.8rem;padding:.15rem .45rem;border-radius:4px;z-index:2;pointer-events:none}
.bar i.n:hover::after{content:var(--d) ": no data"}
.bar i[aria-label]:hover::after,.bar i[aria-label]:focus::after{content:attr(aria-label)}
.bar i:nth-child(-n+20)::after{left:0;transform:none}.bar i:nth-child(n+${BAR_DAYS - 19})::after{left:auto;right:0;transform:none}
.ax,.fig{display:flex;justify-content:space-between;font-size:.85rem;color:var(--mut)}
.fig{justify-content:flex-start;gap:0 1.2rem;flex-wrap:wrap}.fig b{color:var(--fg);font-weight:600}
.ax .d30{display:none}
.list li{padding:.5rem 0;border-top:1px solid var(--line)}.list li:first-child{border-top:0}
.tag{display:inline-block;border-radius:4px;padding:0 .4rem;font-size:.8rem;margin-right:.3rem;background:var(--unk-bg);color:var(--unk-fg)}
.tag.open,.tag.now{background:var(--down-bg);color:var(--down-fg)}.tag.now{background:var(--maint-bg);color:var(--maint-fg)}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
footer{border-top:1px solid var(--line);margin-top:2rem;padding-top:1rem;font-size:.9rem}
@media (max-width:600px){.wrap{padding:.75rem}.bar{grid-template-columns:repeat(30,1fr)}.bar i:nth-child(-n+${BAR_DAYS - 30}){display:none}
.bar i:nth-child(n+${BAR_DAYS - 29})::after{left:0;right:auto;transform:none}.bar i:nth-child(n+${BAR_DAYS - 19})::after{left:50%;transform:translateX(-50%)}
.bar i:nth-child(n+${BAR_DAYS - 9})::after{left:auto;right:0;transform:none}
.ax .d90{display:none}.ax .d30{display:inline}.top{flex-wrap:wrap}}
`;

/** The stylesheet for a bar whose days are `days` (ISO dates, oldest first). */
export function pageCss(days: string[]): string {
  return BASE + days.map((d, i) => `.bar i:nth-child(${i + 1}){--d:"${shortDate(d)}"}`).join('') + '\n';
}
