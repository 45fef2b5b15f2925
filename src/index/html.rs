//! The index's web page (`index.html`), written by `pack publish` and `pack yank` beside
//! the files it shows: every pack with its versions, requirements, hashes and the
//! command that installs it, and a search box. One static file with its data inside, so
//! it works from any web server and from the folder itself.
//!
//! Must not: put index text into the page as markup. Names and descriptions come from
//! packs: the page's script sets them as text only, and the data is embedded as JSON
//! with every `<` escaped, so no text can end the script element.

use serde::Serialize;

use super::PackFile;

/// What the page shows of one pack.
#[derive(Serialize)]
struct Shown<'a> {
    id: &'a str,
    name: &'a str,
    description: &'a str,
    latest: Option<&'a str>,
    versions: Vec<ShownVersion<'a>>,
}

#[derive(Serialize)]
struct ShownVersion<'a> {
    version: &'a str,
    requires: String,
    hash: &'a str,
    size: u64,
    key: &'a str,
    yanked: bool,
}

/// The page for `packs` (by id).
#[must_use]
pub fn page(packs: &[PackFile]) -> String {
    let shown: Vec<Shown<'_>> = packs
        .iter()
        .map(|p| Shown {
            id: &p.id,
            name: &p.name,
            description: &p.description,
            latest: p
                .versions
                .iter()
                .filter(|e| !e.yanked)
                .max_by_key(|e| e.semver())
                .map(|e| e.version.as_str()),
            versions: p
                .versions
                .iter()
                .rev()
                .map(|e| ShownVersion {
                    version: &e.version,
                    requires: e
                        .requires
                        .iter()
                        .map(|r| format!("{} {}", r.id, r.version))
                        .collect::<Vec<_>>()
                        .join(", "),
                    hash: &e.hash,
                    size: e.size,
                    key: &e.key,
                    yanked: e.yanked,
                })
                .collect(),
        })
        .collect();
    let data = serde_json::to_string(&shown)
        .unwrap_or_else(|_| "[]".to_string())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    TEMPLATE.replace("/*DATA*/[]", &data)
}

const TEMPLATE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tokensmith pack index</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f6f4ef; color: #222; }
  header { background: #2f3b52; color: #fff; padding: 18px 28px; }
  header h1 { margin: 0 0 4px; font-size: 22px; }
  header p { margin: 0; opacity: .85; }
  main { max-width: 980px; margin: 0 auto; padding: 20px 28px 60px; }
  #q { width: 100%; box-sizing: border-box; font-size: 16px; padding: 10px 12px; border: 1px solid #bbb; border-radius: 6px; }
  #count { color: #666; margin: 8px 0 16px; }
  .pack { background: #fff; border: 1px solid #ddd; border-radius: 8px; padding: 14px 18px; margin-bottom: 14px; }
  .pack h2 { margin: 0; font-size: 18px; }
  .pack h2 .id { font-family: ui-monospace, monospace; color: #2f3b52; }
  .pack h2 .latest { font-weight: normal; color: #666; font-size: 15px; margin-left: 8px; }
  .pack .desc { margin: 6px 0 10px; }
  code, pre { font-family: ui-monospace, monospace; font-size: 13px; }
  pre { background: #f1f1f1; padding: 6px 10px; border-radius: 4px; margin: 6px 0; overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { text-align: left; padding: 3px 8px 3px 0; border-top: 1px solid #eee; vertical-align: top; }
  td.hash { font-family: ui-monospace, monospace; color: #555; }
  tr.yanked td { color: #aaa; text-decoration: line-through; }
</style>
</head>
<body>
<header>
  <h1>Tokensmith pack index</h1>
  <p>Every version is signed by its author; <code>tokensmith</code> checks the signature, size and hash before installing.</p>
</header>
<main>
  <div>Use this index: <pre id="add"></pre></div>
  <input id="q" type="search" placeholder="Search packs by id, name or description" aria-label="Search packs">
  <div id="count"></div>
  <div id="packs"></div>
</main>
<script>
const PACKS = /*DATA*/[];
const here = location.href.replace(/[?#].*$/, "").replace(/index\.html$/, "");
document.getElementById("add").textContent =
  "tokensmith index add NAME " + (location.protocol === "file:" ? decodeURIComponent(location.pathname.replace(/index\.html$/, "")) : here);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function render() {
  const words = document.getElementById("q").value.toLowerCase().split(/\s+/).filter(w => w);
  const list = document.getElementById("packs");
  list.replaceChildren();
  let shown = 0;
  for (const p of PACKS) {
    const text = (p.id + " " + p.name + " " + p.description).toLowerCase();
    if (!words.every(w => text.includes(w))) continue;
    shown++;
    const box = el("section", "pack");
    box.dataset.id = p.id;
    const h = el("h2");
    h.append(el("span", "id", p.id), " ", el("span", "", p.name), el("span", "latest", p.latest ? p.latest : "every version yanked"));
    box.append(h, el("p", "desc", p.description));
    if (p.latest) box.append(el("pre", "", "tokensmith pack install " + p.id));
    const t = el("table");
    const head = el("tr");
    for (const c of ["version", "requires", "content hash", "size", "key"]) head.append(el("th", "", c));
    t.append(head);
    for (const v of p.versions) {
      const r = el("tr", v.yanked ? "yanked" : "");
      r.append(el("td", "", v.version + (v.yanked ? " (yanked)" : "")), el("td", "", v.requires || "—"),
               el("td", "hash", v.hash.slice(0, 16) + "…"), el("td", "", v.size + " B"), el("td", "hash", v.key));
      t.append(r);
    }
    box.append(t);
    list.append(box);
  }
  document.getElementById("count").textContent = shown + " of " + PACKS.length + " packs";
}
const q = new URLSearchParams(location.search).get("q");
if (q) document.getElementById("q").value = q;
document.getElementById("q").addEventListener("input", render);
render();
</script>
</body>
</html>
"#;
