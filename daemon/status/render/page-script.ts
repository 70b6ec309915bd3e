import { createHash } from 'node:crypto';

/**
 * The live stream opens this long after the load event. An open EventSource
 * is a request that never ends, and headless Chromium's
 * `--virtual-time-budget` (screenshot tools, prerenderers) waits for the
 * network to be idle: opened later than the budget, it lets them finish. Nothing
 * is lost meanwhile: the page is at most 10 s old and the stream starts with a
 * SNAPSHOT of every status and the banner.
 */
export const STREAM_DELAY_MS = 10_000;

/**
 * The page's only script, inline (one request less) and allowed by its hash
 * in the CSP: it follows the page's public event stream and updates the
 * banner and each resource's status in place, and swaps in the posted
 * incidents and notices (fetching the page again) when the stream names a
 * new version of them. The stream opens
 * STREAM_DELAY_MS after `load`, once the page is visible and not being
 * prerendered (a background tab holds no stream until it is looked at);
 * `data-live="on"` on <body> says it is open. Without the script the page is
 * complete and a `<noscript>` meta refresh reloads it every 60 s.
 */
export const PAGE_SCRIPT =
  `(()=>{const b=document.body,u=b.dataset.events;if(!u||!self.EventSource)return;let w;` +
  // The posted part (#posts): the stream names its tag; on another one the page is fetched (revalidated) and the part swapped in.
  `const y=(t,n)=>{w=t;const p=document.getElementById("posts");if(!p||p.dataset.tag===t)return;` +
  `fetch(location.href,{cache:"no-cache",credentials:"same-origin"}).then(r=>r.ok?r.text():"").then(h=>{` +
  `const q=new DOMParser().parseFromString(h,"text/html").getElementById("posts"),c=document.getElementById("posts");` +
  `if(q&&c&&c.dataset.tag!==q.dataset.tag){c.replaceWith(document.adoptNode(q));document.getElementById("posts-said").textContent="Incidents updated"}` +
  `if((!q||q.dataset.tag!==t)&&n&&w===t)setTimeout(()=>y(t,n-1),5e3)}).catch(()=>{})};` +
  `const a=e=>{const d=JSON.parse(e.data),o=d.overall;if(d.posts)y(d.posts,3);if(o){document.getElementById("overall").className="banner "+o.state.toLowerCase();` +
  `document.getElementById("overall-label").textContent=o.label}for(const r of d.resources||[]){const p=document.querySelector("#r"+r.id+" .st");` +
  `if(p){p.className="st "+r.status;p.textContent=r.label}}const t=document.getElementById("updated");if(t&&d.at)t.textContent=d.at};` +
  `const go=()=>{const w=document.prerendering?"prerenderingchange":document.visibilityState==="hidden"?"visibilitychange":"";` +
  `if(w)return document.addEventListener(w,go,{once:true});const s=new EventSource(u);s.onopen=()=>{b.dataset.live="on"};` +
  `s.addEventListener("SNAPSHOT",a);s.addEventListener("PAGE_CHANGED",a)};` +
  `addEventListener("load",()=>setTimeout(go,${STREAM_DELAY_MS}),{once:true})})()`;

export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
}

export const SCRIPT_HASH = cspHash(PAGE_SCRIPT);
