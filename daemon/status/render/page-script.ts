import { createHash } from 'node:crypto';

/**
 * The page's only script, inline (one request less) and allowed by its hash
 * in the CSP: it follows the page's public event stream and updates the
 * banner and each resource's status in place. Without it the page is
 * complete and a `<noscript>` meta refresh reloads it every 60 s.
 */
export const PAGE_SCRIPT = `(()=>{const u=document.body.dataset.events;if(!u||!self.EventSource)return;const s=new EventSource(u);`
  + `const a=e=>{const d=JSON.parse(e.data),o=d.overall;if(o){document.getElementById("overall").className="banner "+o.state.toLowerCase();`
  + `document.getElementById("overall-label").textContent=o.label}for(const r of d.resources||[]){const p=document.querySelector("#r"+r.id+" .st");`
  + `if(p){p.className="st "+r.status;p.textContent=r.label}}const t=document.getElementById("updated");if(t&&d.at)t.textContent=d.at};`
  + `s.addEventListener("SNAPSHOT",a);s.addEventListener("PAGE_CHANGED",a)})()`;

export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
}

export const SCRIPT_HASH = cspHash(PAGE_SCRIPT);
