"""The inline style and script of the `jaxlint explain --html` page (no network: nothing external)."""

CSS = """
:root{--bg:#fff;--fg:#1b1f24;--muted:#6a737d;--line:#d0d7de;--panel:#f6f8fa;--hl:#fff1a8;
--cur:#ffd33d;--dup:#e36209;--bad:#cf222e;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8b949e;--line:#30363d;
--panel:#161b22;--hl:#4d3f00;--cur:#7a6200;--dup:#f0883e;--bad:#ff7b72;--accent:#58a6ff}}
*{box-sizing:border-box}
body{margin:0;padding:0 1rem 2rem;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
h1{font-size:1.3rem;margin:1rem 0 .2rem}h2{font-size:1.05rem;margin:1.4rem 0 .4rem}
h1 code,.sig code{font-size:.95em}.meta{color:var(--muted);margin:0}
code,.scroll,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
.summary{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.5rem 1rem .5rem 2rem}
.panes{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1.1fr) minmax(0,1.3fr);gap:.6rem}
@media (max-width:900px){.panes{grid-template-columns:minmax(0,1fr)}.scroll{max-height:45vh}}
.pane{display:flex;flex-direction:column}.pane h2{margin:.8rem 0 .3rem}.pane h2 small{color:var(--muted);font-weight:normal}
.scroll{flex:1 1 auto;min-height:8em;max-height:70vh;overflow:auto;position:relative;border:1px solid var(--line);border-radius:6px;
font-size:12px;background:var(--panel)}
.ln{white-space:pre;padding:0 .5em 0 0;cursor:default;min-width:max-content}
.ln .no{display:inline-block;width:3.2em;padding-right:.6em;text-align:right;color:var(--muted);user-select:none}
.ln.outside code{color:var(--muted)}
.ln:focus{outline:2px solid var(--accent);outline-offset:-2px}
.hl{background:var(--hl)}.ln.cur{background:var(--cur)}
.gap,.comp{color:var(--muted);padding:.1em .6em;white-space:pre}
.comp{position:sticky;left:0;border-top:1px solid var(--line);font-style:italic}
.dup{box-shadow:inset 3px 0 var(--dup)}
.badge{display:inline-block;margin-left:.6em;padding:0 .4em;border-radius:3px;font-size:.85em;
color:#fff;background:var(--dup);white-space:nowrap;position:sticky;right:.3em}.badge.recomputed-expensive{background:var(--bad)}.badge.comm{background:var(--accent)}
.empty{color:var(--muted);padding:.5em}
.tag{margin-left:.6em;color:var(--muted);font-size:.85em}
table{border-collapse:collapse;margin:.3rem 0;display:block;max-width:100%;overflow-x:auto}th,td{border:1px solid var(--line);padding:.2em .6em;
text-align:left;vertical-align:top}th{background:var(--panel)}td.n{text-align:right;font-variant-numeric:tabular-nums}
.finding{border:1px solid var(--line);border-radius:6px;padding:.4rem .8rem;margin:.5rem 0}
.finding.hl{background:none;outline:3px solid var(--cur)}.tables{display:flex;flex-wrap:wrap;gap:0 1.5rem;align-items:flex-start}
.hint{color:var(--muted);font-size:.9em;margin:.3rem 0}.verdict{font-weight:600}pre{white-space:pre-wrap;margin:.3rem 0}
"""

# Rows with the same data-line light up together; the focused row stays lit after the mouse leaves.
JS = """
(function(){
var byLine={},lit=[];
document.querySelectorAll('.xref[data-line]').forEach(function(r){
  var l=r.getAttribute('data-line');if(l)(byLine[l]=byLine[l]||[]).push(r);});
function reveal(box,r){var top=r.offsetTop,bottom=top+r.offsetHeight;
  if(top<box.scrollTop||bottom>box.scrollTop+box.clientHeight)box.scrollTop=Math.max(0,top-box.clientHeight/3);}
function light(row){
  lit.forEach(function(r){r.classList.remove('hl','cur');});lit=[];
  if(!row)return;row.classList.add('cur');lit.push(row);
  var home=row.closest('.scroll'),done=[];
  (byLine[row.getAttribute('data-line')]||[]).forEach(function(r){
    r.classList.add('hl');lit.push(r);var box=r.closest('.scroll');
    if(box&&box!==home&&done.indexOf(box)<0){done.push(box);reveal(box,r);}});}
function pinned(){var a=document.activeElement;return a&&a.classList&&a.classList.contains('xref')?a:null;}
document.addEventListener('mouseover',function(e){var r=e.target.closest('.xref');if(r)light(r);});
document.addEventListener('mouseout',function(e){var r=e.target.closest('.xref');
  if(r&&!(e.relatedTarget&&r.contains(e.relatedTarget)))light(pinned());});
document.addEventListener('focusin',function(e){var r=e.target.closest('.xref');light(r);
  if(r&&r.classList.contains('ln')){var box=r.closest('.scroll');
    box.querySelectorAll('.ln[tabindex="0"]').forEach(function(o){o.tabIndex=-1;});r.tabIndex=0;}});
document.addEventListener('keydown',function(e){var r=pinned();if(!r)return;
  if(e.key==='Escape'){r.blur();light(null);return;}
  if(e.key!=='ArrowDown'&&e.key!=='ArrowUp'||!r.classList.contains('ln'))return;
  var rows=Array.prototype.slice.call(r.closest('.scroll').querySelectorAll('.ln'));
  var next=rows[rows.indexOf(r)+(e.key==='ArrowDown'?1:-1)];
  if(next){e.preventDefault();next.focus();reveal(next.closest('.scroll'),next);}});
})();
"""
