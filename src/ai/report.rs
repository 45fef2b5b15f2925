//! `--report FILE.html` of `balance` and `simulate` (docs/ai.md, "Reports with plots"):
//! one self-contained HTML page per run, its charts drawn by Chart.js (vendored in
//! `report/chartjs/`, with its licence and version) inlined in the page, so it opens
//! offline. Pure text making: the caller writes the file.
//!
//! Everything from packs is hostile text (a card may be named `</script><img …>`): the
//! page's words are HTML-escaped, and the charts' data travels as JSON inside a
//! `<script type="application/json">` with `<`, `>` and `&` written as `\u003c` …, read by
//! `JSON.parse` and drawn on canvases, never put into the page as markup. When every
//! chart is drawn, the page's `body` says so in `data-drawn` (the count), next to
//! `data-charts` (the charts it has): what the browser test checks.

use serde_json::{Value, json};

use super::balance::{BalanceReport, Verdict};
use super::race::RaceReport;
use super::simulate::Report;
use super::tune::TuneReport;

/// Chart.js, as vendored.
const CHART_JS: &str = include_str!("report/chartjs/chart.umd.min.js");
/// Its version, as its README beside it states.
pub const CHART_JS_VERSION: &str = "4.6.1";

/// The page's colours: strong, weak, within noise, neutral, a second series.
const STRONG: &str = "#c0392b";
const WEAK: &str = "#2e6fba";
const NOISE: &str = "#8a8f98";
const INK: &str = "#1f2933";
const SECOND: &str = "#e0a030";

/// A table: the header and the rows, as plain text (escaped when written).
struct Table {
    head: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// One section of the page.
struct Section {
    heading: String,
    text: Vec<String>,
    chart: Option<(Value, u32)>,
    table: Option<Table>,
}

/// A page being made.
struct Page {
    title: String,
    lead: Vec<String>,
    sections: Vec<Section>,
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped for HTML text and attributes.
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `value` as JSON that cannot end or open a tag inside a `<script>`.
#[must_use]
pub fn script_json(value: &Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2933;background:#f5f6f8;margin:0;padding:24px 32px 48px;line-height:1.45}
h1{font-size:1.55em;margin:0 0 6px}h2{font-size:1.15em;margin:0 0 8px}
.lead{color:#52606d;margin:0 0 18px}.lead p{margin:2px 0}
section{background:#fff;border:1px solid #e1e4e8;border-radius:8px;padding:16px 20px;margin:0 0 18px;max-width:1040px}
section p{margin:4px 0 10px;color:#3e4c59}
.chart{position:relative;width:100%}
table{border-collapse:collapse;margin-top:12px;font-size:.9em;font-variant-numeric:tabular-nums}
th,td{padding:3px 12px 3px 0;text-align:left;border-bottom:1px solid #eef0f2;vertical-align:top}
th{color:#52606d;font-weight:600}
footer{color:#7b8794;font-size:.85em;max-width:1040px}";

/// The page's own script: draw every chart, then say how many were drawn.
const SCRIPT: &str = "(function(){
var data=JSON.parse(document.getElementById('report-data').textContent);
var drawn=0,failed=[];
Chart.defaults.animation=false;
Chart.defaults.font.family=\"system-ui,-apple-system,'Segoe UI',Roboto,sans-serif\";
Chart.defaults.color='#3e4c59';
data.charts.forEach(function(c){
try{
var cfg=c.config;
if(c.zero){var ax=cfg.options.scales[c.zero];ax.grid=ax.grid||{};
ax.grid.color=function(x){return x.tick&&x.tick.value===0?'#52606d':'rgba(0,0,0,0.07)';};
ax.grid.lineWidth=function(x){return x.tick&&x.tick.value===0?1.5:1;};}
var chart=new Chart(document.getElementById(c.id),cfg);
var meta=chart.getDatasetMeta(0);
if(chart.chartArea&&chart.chartArea.width>0&&meta&&meta.data.length>0){drawn++;}else{failed.push(c.id);}
}catch(e){failed.push(c.id+': '+e.message);}
});
document.body.setAttribute('data-drawn',String(drawn));
document.getElementById('drawn').textContent=drawn+' of '+data.charts.length+' charts drawn'+(failed.length?' (not drawn: '+failed.join('; ')+')':'')+'.';
})();";

impl Page {
    fn new(title: String) -> Page {
        Page {
            title,
            lead: Vec::new(),
            sections: Vec::new(),
        }
    }

    fn section(&mut self, heading: impl Into<String>) -> &mut Section {
        self.sections.push(Section {
            heading: heading.into(),
            text: Vec::new(),
            chart: None,
            table: None,
        });
        let last = self.sections.len() - 1;
        &mut self.sections[last]
    }

    /// The whole page.
    fn html(&self) -> String {
        let mut charts = Vec::new();
        let mut body = String::new();
        body.push_str(&format!(
            "<h1>{}</h1>\n<div class=\"lead\">",
            escape(&self.title)
        ));
        for p in &self.lead {
            body.push_str(&format!("<p>{}</p>", escape(p)));
        }
        body.push_str("</div>\n");
        for s in &self.sections {
            body.push_str(&format!("<section>\n<h2>{}</h2>\n", escape(&s.heading)));
            for p in &s.text {
                body.push_str(&format!("<p>{}</p>\n", escape(p)));
            }
            if let Some((config, height)) = &s.chart {
                let id = format!("chart{}", charts.len());
                body.push_str(&format!(
                    "<div class=\"chart\" style=\"height:{height}px\"><canvas id=\"{id}\" role=\"img\" aria-label=\"{}\"></canvas></div>\n",
                    escape(&s.heading)
                ));
                let zero = config.get("zero").cloned().unwrap_or(Value::Null);
                let mut config = config.clone();
                if let Some(o) = config.as_object_mut() {
                    o.remove("zero");
                }
                charts.push(json!({ "id": id, "config": config, "zero": zero }));
            }
            if let Some(t) = &s.table {
                body.push_str("<table><thead><tr>");
                for h in &t.head {
                    body.push_str(&format!("<th>{}</th>", escape(h)));
                }
                body.push_str("</tr></thead><tbody>\n");
                for r in &t.rows {
                    body.push_str("<tr>");
                    for c in r {
                        body.push_str(&format!("<td>{}</td>", escape(c)));
                    }
                    body.push_str("</tr>\n");
                }
                body.push_str("</tbody></table>\n");
            }
            body.push_str("</section>\n");
        }
        let n = charts.len();
        let data = script_json(&json!({ "charts": charts }));
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body data-charts=\"{n}\" data-drawn=\"0\">\n{body}<footer><p id=\"drawn\">The charts need JavaScript.</p><p>Made by tokensmith {version}. Charts drawn by Chart.js {CHART_JS_VERSION} (MIT licence), inlined.</p></footer>\n<script type=\"application/json\" id=\"report-data\">{data}</script>\n<script>\n{CHART_JS}\n</script>\n<script>\n{SCRIPT}\n</script>\n</body>\n</html>\n",
            title = escape(&self.title),
            version = env!("CARGO_PKG_VERSION"),
        )
    }
}

/// A bound of the value axis, half a step outside the range so the end bars show.
#[allow(clippy::cast_precision_loss)]
fn pad(v: i64, by: f64) -> f64 {
    v as f64 + by
}

fn points(x: f64) -> f64 {
    (1000.0 * x).round() / 10.0
}

fn pct(x: f64) -> String {
    format!("{:+.1}", 100.0 * x)
}

fn interval(ci: [f64; 2]) -> String {
    format!("{} to {}", pct(ci[0]), pct(ci[1]))
}

fn colour(v: Verdict) -> &'static str {
    match v {
        Verdict::Strong => STRONG,
        Verdict::Weak => WEAK,
        Verdict::WithinNoise => NOISE,
    }
}

/// A horizontal chart of effects with intervals, one row per label: `bands` are
/// interval datasets (label, intervals, colours), `effects` the points.
fn forest(
    labels: &[String],
    bands: Vec<(String, Vec<[f64; 2]>, Vec<String>)>,
    effects: &[f64],
) -> (Value, u32) {
    let mut datasets: Vec<Value> = bands
        .into_iter()
        .map(|(label, iv, colours)| {
            json!({
                "type": "bar",
                "label": label,
                "data": iv.iter().map(|[a, b]| json!([points(*a), points(*b)])).collect::<Vec<_>>(),
                "backgroundColor": colours,
                "borderRadius": 3,
                "barPercentage": 0.55,
                "grouped": false,
                "order": 2
            })
        })
        .collect();
    datasets.push(json!({
        "type": "line",
        "label": "effect",
        "data": effects.iter().map(|e| points(*e)).collect::<Vec<_>>(),
        "showLine": false,
        "pointStyle": "rectRot",
        "pointRadius": 6,
        "pointHoverRadius": 7,
        "backgroundColor": INK,
        "borderColor": "#ffffff",
        "order": 1
    }));
    let rows = u32::try_from(labels.len()).unwrap_or(u32::MAX);
    let config = json!({
        "type": "bar",
        "data": { "labels": labels, "datasets": datasets },
        "options": {
            "indexAxis": "y",
            "responsive": true,
            "maintainAspectRatio": false,
            "plugins": { "legend": { "position": "bottom" } },
            "scales": {
                "x": { "title": { "display": true, "text": "effect, win-rate points (the card minus its control)" } },
                "y": { "grid": { "display": false } }
            }
        },
        "zero": "x"
    });
    (config, 90 + 30 * rows.min(200))
}

/// `balance` of one card, or of every card of the pack `pack` (`--pack`): each card's
/// effect with its interval.
#[must_use]
pub fn balance(results: &[BalanceReport], level: &str, pack: Option<&str>) -> String {
    let one = if pack.is_none() {
        results.first()
    } else {
        None
    };
    let title = match (one, pack) {
        (Some(one), _) => format!("balance {}: {}", one.card, one.verdict.words()),
        (None, Some(p)) => format!(
            "balance of pack {p}: {} cards, strongest first",
            results.len()
        ),
        (None, None) => format!("balance: {} cards, strongest first", results.len()),
    };
    let mut page = Page::new(title);
    page.lead.push(format!(
        "Paired games with each card and with a control card in its slot, {level} against {level}, both seats. The effect is the win-rate difference in points, with its 95 % interval: strong when the interval lies above zero, weak below it, within noise when it holds zero."
    ));
    let labels: Vec<String> = results.iter().map(|r| r.card.clone()).collect();
    let s = page.section("Each card's effect with its 95 % interval");
    s.chart = Some(forest(
        &labels,
        vec![(
            "95 % interval".into(),
            results.iter().map(|r| r.ci95).collect(),
            results
                .iter()
                .map(|r| colour(r.verdict).to_string())
                .collect(),
        )],
        &results.iter().map(|r| r.effect).collect::<Vec<_>>(),
    ));
    s.table = Some(Table {
        head: vec![
            "card".into(),
            "effect".into(),
            "95 % interval".into(),
            "pairs".into(),
            "verdict".into(),
        ],
        rows: results
            .iter()
            .map(|r| {
                let undecided = match &r.sequential {
                    Some(q) if !q.decided => " (undecided at the cap)",
                    _ => "",
                };
                vec![
                    r.card.clone(),
                    pct(r.effect),
                    interval(r.ci95),
                    r.pairs.to_string(),
                    format!("{}{undecided}", r.verdict.words()),
                ]
            })
            .collect(),
    });
    if let Some(one) = one {
        if let Some(q) = &one.sequential {
            s.text.push(format!(
                "Sequential test (alpha {}%, beta {}%, effect {} points): {} after {} of at most {} pairs in {} rounds; a fixed-size test at the same error rates needs {} pairs at this spread.",
                100.0 * q.alpha,
                100.0 * q.beta,
                100.0 * q.effect,
                if q.decided { "decided" } else { "not decided" },
                one.pairs,
                q.cap_pairs,
                q.rounds,
                q.fixed_pairs
            ));
        }
        let decks: Vec<String> = one.decks.iter().map(|d| d.deck.clone()).collect();
        let s = page.section("Win rate per deck, with the card and with the control");
        s.chart = Some((
            json!({
                "type": "bar",
                "data": {
                    "labels": decks,
                    "datasets": [
                        { "label": "with the card", "data": one.decks.iter().map(|d| points(d.win_rate_with)).collect::<Vec<_>>(), "backgroundColor": STRONG, "borderRadius": 3 },
                        { "label": "with the control", "data": one.decks.iter().map(|d| points(d.win_rate_control)).collect::<Vec<_>>(), "backgroundColor": NOISE, "borderRadius": 3 }
                    ]
                },
                "options": {
                    "responsive": true,
                    "maintainAspectRatio": false,
                    "plugins": { "legend": { "position": "bottom" } },
                    "scales": { "y": { "min": 0, "max": 100, "title": { "display": true, "text": "win rate, %" } } }
                }
            }),
            300,
        ));
        s.table = Some(Table {
            head: vec![
                "deck".into(),
                "control".into(),
                "games".into(),
                "with".into(),
                "control".into(),
            ],
            rows: one
                .decks
                .iter()
                .map(|d| {
                    vec![
                        d.deck.clone(),
                        d.control.clone(),
                        d.games.to_string(),
                        format!("{:.1}%", 100.0 * d.win_rate_with),
                        format!("{:.1}%", 100.0 * d.win_rate_control),
                    ]
                })
                .collect(),
        });
    }
    page.html()
}

/// `balance --tune`: per level, the curve of effect against value.
#[must_use]
pub fn tune(r: &TuneReport) -> String {
    let mut page = Page::new(format!("tuning {} {}", r.card, r.field));
    let current = r.current.map(|v| format!(" (now {v})")).unwrap_or_default();
    page.lead.push(format!(
        "{}{current}: values {} to {} searched, the card against {}. Each value is a patch judged by a sequential paired test; a value whose effect is within noise of zero is fair.",
        r.field, r.range[0], r.range[1], r.control
    ));
    if r.levels_disagree {
        page.lead.push(
            "The levels disagree: AI play is not human play; look at both, and at the games."
                .into(),
        );
    }
    for t in &r.levels {
        let answer = match (t.value, t.interval, &t.no_fair_value) {
            (Some(v), Some([a, b]), _) => format!("fair at {v} (fair from {a} to {b})"),
            (_, _, why) => format!("no fair value: {}", why.as_deref().unwrap_or("none found")),
        };
        let s = page.section(format!("The tuning curve at {}: {answer}", t.level));
        s.text.push(format!(
            "{} pairs ({} games) in {:.1} s. Bars: each value's 95 % interval, coloured by its verdict; points: the effect.",
            t.pairs,
            2 * t.pairs,
            t.seconds
        ));
        s.chart = Some((
            json!({
                "type": "bar",
                "data": {
                    "datasets": [
                        { "type": "line", "label": "effect", "data": t.curve.iter().map(|p| json!({ "x": p.value, "y": points(p.effect) })).collect::<Vec<_>>(),
                          "borderColor": INK, "backgroundColor": INK, "pointRadius": 5, "tension": 0, "order": 1 },
                        { "type": "bar", "label": "95 % interval", "data": t.curve.iter().map(|p| json!({ "x": p.value, "y": [points(p.ci95[0]), points(p.ci95[1])] })).collect::<Vec<_>>(),
                          "backgroundColor": t.curve.iter().map(|p| colour(p.verdict)).collect::<Vec<_>>(), "barThickness": 16, "borderRadius": 3, "order": 2 }
                    ]
                },
                "options": {
                    "responsive": true,
                    "maintainAspectRatio": false,
                    "plugins": { "legend": { "position": "bottom" } },
                    "scales": {
                        "x": { "type": "linear", "offset": false, "min": pad(r.range[0], -0.5), "max": pad(r.range[1], 0.5), "ticks": { "precision": 0, "includeBounds": false }, "title": { "display": true, "text": r.field.clone() } },
                        "y": { "title": { "display": true, "text": "effect, win-rate points" } }
                    }
                },
                "zero": "y"
            }),
            340,
        ));
        s.table = Some(Table {
            head: vec![
                r.field.clone(),
                "effect".into(),
                "95 % interval".into(),
                "pairs".into(),
                "verdict".into(),
            ],
            rows: t
                .curve
                .iter()
                .map(|p| {
                    vec![
                        p.value.to_string(),
                        pct(p.effect),
                        interval(p.ci95),
                        p.pairs.to_string(),
                        format!(
                            "{}{}",
                            p.verdict.words(),
                            if p.decided {
                                ""
                            } else {
                                " (undecided at the cap)"
                            }
                        ),
                    ]
                })
                .collect(),
        });
    }
    page.html()
}

/// `balance --variants`: the race, nearest to fair first.
#[must_use]
pub fn race(r: &RaceReport, level: &str) -> String {
    let mut page = Page::new(format!(
        "race of {} variants of {}",
        r.variants.len(),
        r.card
    ));
    page.lead.push(format!(
        "Each variant's effect of {} against {}, {level} against {level}, both seats, on the same seeds. Variants clearly farther from fair than another were dropped (alpha {}%: the chance of dropping the one nearest to fair). Stopped after {} rounds: {}; {} games in {:.1} s.",
        r.card,
        r.control,
        100.0 * r.alpha,
        r.rounds,
        r.stopped.words(),
        r.games,
        r.seconds
    ));
    let labels: Vec<String> = r
        .variants
        .iter()
        .map(|s| format!("{}. {}", s.rank, s.name))
        .collect();
    let s = page.section("The race: each variant's effect, nearest to fair first");
    s.text.push("Light bars: the race's simultaneous intervals (what the dropping decides on); dark bars: each variant's own 95 % interval; points: the effect. Dropped variants are greyed.".into());
    let light = |v: &super::race::Standing| {
        if v.dropped.is_some() {
            "rgba(138,143,152,0.25)"
        } else {
            "rgba(46,111,186,0.22)"
        }
        .to_string()
    };
    let dark = |v: &super::race::Standing| {
        if v.dropped.is_some() {
            NOISE.to_string()
        } else {
            colour(v.verdict).to_string()
        }
    };
    s.chart = Some(forest(
        &labels,
        vec![
            (
                "race interval".into(),
                r.variants.iter().map(|v| v.race_interval).collect(),
                r.variants.iter().map(light).collect(),
            ),
            (
                "95 % interval".into(),
                r.variants.iter().map(|v| v.ci95).collect(),
                r.variants.iter().map(dark).collect(),
            ),
        ],
        &r.variants.iter().map(|v| v.effect).collect::<Vec<_>>(),
    ));
    s.table = Some(Table {
        head: vec![
            "rank".into(),
            "variant".into(),
            "effect".into(),
            "95 % interval".into(),
            "pairs".into(),
            "verdict".into(),
            "left the race".into(),
            "patches".into(),
        ],
        rows: r
            .variants
            .iter()
            .map(|v| {
                vec![
                    v.rank.to_string(),
                    v.name.clone(),
                    pct(v.effect),
                    interval(v.ci95),
                    v.pairs.to_string(),
                    v.verdict.words().into(),
                    v.dropped.as_ref().map_or_else(
                        || "raced to the end".into(),
                        |d| format!("round {}, farther from fair than {}", d.round, d.by),
                    ),
                    if v.changes.is_empty() {
                        "the content as loaded".into()
                    } else {
                        v.changes.join("; ")
                    },
                ]
            })
            .collect(),
    });
    page.html()
}

/// A bar chart of counts.
fn histogram(labels: Vec<String>, counts: Vec<u64>, x: &str, colour: &str) -> (Value, u32) {
    (
        json!({
            "type": "bar",
            "data": { "labels": labels, "datasets": [ { "label": "games", "data": counts, "backgroundColor": colour, "borderRadius": 2, "categoryPercentage": 0.9, "barPercentage": 1.0 } ] },
            "options": {
                "responsive": true,
                "maintainAspectRatio": false,
                "plugins": { "legend": { "display": false } },
                "scales": { "x": { "title": { "display": true, "text": x } }, "y": { "beginAtZero": true, "title": { "display": true, "text": "games" } } }
            }
        }),
        260,
    )
}

/// A distribution over whole numbers, in at most 40 bins of equal width.
fn binned(counts: &std::collections::BTreeMap<u32, u64>) -> (Vec<String>, Vec<u64>) {
    let (Some((&lo, _)), Some((&hi, _))) = (counts.first_key_value(), counts.last_key_value())
    else {
        return (Vec::new(), Vec::new());
    };
    let width = ((hi - lo) / 40 + 1).max(1);
    let bins = ((hi - lo) / width + 1) as usize;
    let mut out = vec![0u64; bins];
    for (&k, &n) in counts {
        out[((k - lo) / width) as usize] += n;
    }
    let labels = (0..bins)
        .map(|i| {
            let a = lo + width * u32::try_from(i).unwrap_or(0);
            if width == 1 {
                a.to_string()
            } else {
                format!("{a}–{}", a + width - 1)
            }
        })
        .collect();
    (labels, out)
}

/// `simulate`: the game-quality metrics' distributions and the cards' pick rates.
#[must_use]
pub fn simulate(r: &Report, title: &str) -> String {
    let mut page = Page::new(format!("simulate: {title}"));
    let q = &r.quality;
    page.lead.push(format!(
        "{} games: A won {}, B won {}, {} draws; A's win rate {:.1}% (95 % interval {:.1}% to {:.1}%); the first seat took {:.1}% of the points (95 % interval {:.1}% to {:.1}%).",
        r.games,
        r.wins_a,
        r.wins_b,
        r.draws,
        100.0 * r.win_rate_a,
        100.0 * r.ci95_a[0],
        100.0 * r.ci95_a[1],
        100.0 * q.first_seat,
        100.0 * q.first_seat_ci95[0],
        100.0 * q.first_seat_ci95[1]
    ));
    let t = &r.totals.quality;
    let (labels, counts) = binned(&t.lengths);
    let s = page.section("Game length");
    s.text.push(format!(
        "Moves per game: mean {:.1}, median {} (10 % {}, 90 % {}; {} to {}).",
        q.length.mean, q.length.median, q.length.p10, q.length.p90, q.length.min, q.length.max
    ));
    s.chart = Some(histogram(labels, counts, "moves", WEAK));
    let (labels, counts) = binned(&t.lead_changes);
    let s = page.section("Lead changes per game");
    s.text.push(format!(
        "{:.2} lead changes a game, in {:.1}% of games; comebacks (the half-time leader lost): {:.1}%.",
        q.lead_changes,
        100.0 * q.lead_change_games,
        100.0 * q.comebacks
    ));
    s.chart = Some(histogram(labels, counts, "lead changes", SECOND));
    let s = page.section("Decisiveness: when the winner led for good");
    s.text.push(format!(
        "Won games by the share of the game played before the winner led for good; on average {:.1}%. Draws: {:.1}%.",
        100.0 * q.decided_at,
        100.0 * q.draws
    ));
    let labels: Vec<String> = (0..q.decided_histogram.len())
        .map(|i| format!("{}–{}%", 10 * i, 10 * (i + 1)))
        .collect();
    s.chart = Some(histogram(
        labels,
        q.decided_histogram.to_vec(),
        "share of the game",
        STRONG,
    ));
    let mut cards: Vec<&super::simulate::CardStats> =
        r.cards.iter().filter(|c| c.offered > 0).collect();
    cards.sort_by(|a, b| b.pick_rate.total_cmp(&a.pick_rate).then(a.id.cmp(&b.id)));
    cards.truncate(60);
    if !cards.is_empty() {
        let s = page.section("Pick rate per card (the cards offered, most picked first)");
        s.text.push(format!(
            "Dead cards (picked < 5%): {}; dominant cards (picked >= 90%): {}.",
            if q.dead_cards.is_empty() {
                "none".into()
            } else {
                q.dead_cards.join(", ")
            },
            if q.dominant_cards.is_empty() {
                "none".into()
            } else {
                q.dominant_cards.join(", ")
            }
        ));
        let rows = u32::try_from(cards.len()).unwrap_or(u32::MAX);
        s.chart = Some((
            json!({
                "type": "bar",
                "data": {
                    "labels": cards.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
                    "datasets": [
                        { "label": "pick rate, %", "data": cards.iter().map(|c| points(c.pick_rate)).collect::<Vec<_>>(), "backgroundColor": WEAK, "borderRadius": 2 },
                        { "label": "win rate when played, %", "data": cards.iter().map(|c| points(c.win_rate_when_played)).collect::<Vec<_>>(), "backgroundColor": SECOND, "borderRadius": 2 }
                    ]
                },
                "options": {
                    "indexAxis": "y",
                    "responsive": true,
                    "maintainAspectRatio": false,
                    "plugins": { "legend": { "position": "bottom" } },
                    "scales": { "x": { "min": 0, "max": 100 }, "y": { "grid": { "display": false } } }
                }
            }),
            80 + 30 * rows,
        ));
    }
    page.html()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_escaped_in_the_page_and_in_its_data() {
        assert_eq!(
            escape("</script><img src=x onerror=\"a('b')\">&"),
            "&lt;/script&gt;&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
        let j = script_json(&json!({ "name": "</script><!-- \u{2028}&" }));
        assert!(
            !j.contains('<') && !j.contains('>') && !j.contains('&'),
            "{j}"
        );
        let back: Value = serde_json::from_str(&j).expect("still JSON");
        assert_eq!(back["name"], "</script><!-- \u{2028}&");
    }

    #[test]
    fn the_library_cannot_end_its_own_script() {
        let lower = CHART_JS.to_ascii_lowercase();
        assert!(!lower.contains("</script") && !lower.contains("<!--"));
    }

    #[test]
    fn distributions_are_binned_to_at_most_forty_bars() {
        let counts: std::collections::BTreeMap<u32, u64> = (10..=210).map(|k| (k, 1)).collect();
        let (labels, bins) = binned(&counts);
        assert!(
            bins.len() <= 40 && bins.iter().sum::<u64>() == 201,
            "{labels:?}"
        );
        assert_eq!(labels[0], "10–15");
        let (labels, bins) = binned(&[(0, 3), (2, 1)].into_iter().collect());
        assert_eq!(
            (labels, bins),
            (vec!["0".into(), "1".into(), "2".into()], vec![3, 0, 1])
        );
    }
}
