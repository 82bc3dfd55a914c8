//! `myao eval --html`: the report as one self-contained page (inline CSS
//! and SVG, no script, nothing fetched), to look at where the bot would
//! have spoken.
//!
//! The page holds the figures per level as small bar charts, the current
//! level marked, and per channel a timeline: the people's messages as a
//! strip, the two-person exchanges under it, and one row per level with the
//! bot's posts and reactions, the questions it joined or missed and the
//! exchanges it intruded on. Each mark says on hover what it is (with the
//! rule stage's score and signals), and each highlighted case links to its
//! line in the lists under the timeline.
//!
//! The page is a file that gets shared: private channels, group DMs and
//! DMs are left out unless asked for, and messages are shortened unless
//! asked for in full.

use std::collections::{BTreeMap, HashMap};

use minijinja::{AutoEscape, Environment};
use myao_domain::{ChannelId, Ts};
use serde::Serialize;

use super::{figures, Counts, Mark, MarkKind, Report, Said};

/// The page's template.
const TEMPLATE: &str = include_str!("../../templates/eval-report.html");

/// The characters of a message kept when the text is shortened.
pub const SHORT_TEXT_CHARS: usize = 40;

/// What the page may show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HtmlOptions {
    /// Private channels, group DMs and DMs too (`--include-private`).
    pub include_private: bool,
    /// Messages in full (`--full-text`), not cut to [`SHORT_TEXT_CHARS`].
    pub full_text: bool,
}

/// The room of a timeline's labels, the width its messages share when
/// they are few, and the least width of one message when they are many
/// (the timeline then scrolls).
const LEFT: f64 = 110.0;
const PLOT: f64 = 1000.0;
const MIN_STEP: f64 = 5.0;
const MAX_STEP: f64 = 40.0;
/// The rows of a timeline: the messages (y 8 to 30) and the exchanges (38
/// to 48), drawn by the template, then one row per level from here.
const LEVELS_Y: f64 = 64.0;
const LEVEL_ROW: f64 = 26.0;

#[derive(Serialize)]
struct Page {
    source: String,
    llm: String,
    current: &'static str,
    full_text: bool,
    left_out: usize,
    charts: Vec<Chart>,
    channels: Vec<ChannelView>,
}

#[derive(Serialize)]
struct Chart {
    label: &'static str,
    bars: Vec<Bar>,
}

#[derive(Serialize)]
struct Bar {
    level: &'static str,
    x: f64,
    y: f64,
    height: f64,
    /// The figure in full, and as short as a bar's label must be.
    value: String,
    label: String,
    current: bool,
}

#[derive(Serialize)]
struct ChannelView {
    anchor: String,
    name: String,
    private: bool,
    messages: usize,
    span: String,
    width: f64,
    height: f64,
    ticks: Vec<Tick>,
    exchanges: Vec<Band>,
    rows: Vec<LevelRow>,
    cases: Vec<LevelCases>,
}

#[derive(Serialize)]
struct Tick {
    x: f64,
    question: bool,
    title: String,
}

#[derive(Serialize)]
struct Band {
    x: f64,
    width: f64,
    title: String,
    href: Option<String>,
}

#[derive(Serialize)]
struct LevelRow {
    level: &'static str,
    y: f64,
    current: bool,
    marks: Vec<MarkView>,
    questions: Vec<QuestionMark>,
    intrusions: Vec<Band>,
}

#[derive(Serialize)]
struct MarkView {
    x: f64,
    kind: &'static str,
    unprompted: bool,
    preempted: bool,
    title: String,
    href: Option<String>,
}

#[derive(Serialize)]
struct QuestionMark {
    x: f64,
    joined: bool,
    title: String,
    href: String,
}

#[derive(Serialize)]
struct LevelCases {
    level: &'static str,
    open: bool,
    joined: Vec<Case>,
    missed: Vec<Case>,
    intruded: Vec<Case>,
    preempted: Vec<Case>,
}

#[derive(Serialize)]
struct Case {
    id: String,
    when: String,
    text: String,
}

/// The page of `report`.
pub fn render(report: &Report, options: HtmlOptions) -> Result<String, minijinja::Error> {
    let shown: Vec<ChannelId> = report
        .channel_ids()
        .into_iter()
        .filter(|id| options.include_private || report.public.contains(id))
        .collect();
    // The messages and the marks by channel, gathered once.
    let mut people: HashMap<&ChannelId, Vec<&Said>> = HashMap::new();
    for m in &report.people {
        people.entry(&m.channel).or_default().push(m);
    }
    let marks: Vec<HashMap<&ChannelId, Vec<&Mark>>> = report
        .levels
        .iter()
        .map(|level| {
            let mut by: HashMap<&ChannelId, Vec<&Mark>> = HashMap::new();
            for m in &level.marks {
                by.entry(&m.channel).or_default().push(m);
            }
            by
        })
        .collect();
    let channels = shown
        .iter()
        .map(|id| {
            let said = people.get(id).map(Vec::as_slice).unwrap_or_default();
            let marks: Vec<&[&Mark]> = marks
                .iter()
                .map(|by| by.get(id).map(Vec::as_slice).unwrap_or_default())
                .collect();
            channel(report, id, said, &marks, options)
        })
        .collect();
    let page = Page {
        source: report.source.clone(),
        llm: match &report.llm {
            Some(llm) => llm.clone(),
            None => "none: the rule stage alone (offline)".to_owned(),
        },
        current: report.current.name(),
        full_text: options.full_text,
        left_out: report.channel_ids().len() - shown.len(),
        charts: charts(report, &shown),
        channels,
    };
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.add_template("eval-report.html", TEMPLATE)?;
    env.get_template("eval-report.html")?
        .render(minijinja::Value::from_serialize(&page))
}

/// The counts of each level over the channels `shown`.
fn totals(report: &Report, shown: &[ChannelId]) -> Vec<Counts> {
    report
        .levels
        .iter()
        .map(|level| {
            let channels: BTreeMap<ChannelId, figures::Figures> = shown
                .iter()
                .filter_map(|id| Some((id.clone(), level.channels.get(id)?.figures.clone())))
                .collect();
            let mut total = Counts {
                figures: figures::total(&channels),
                ..Counts::default()
            };
            for id in shown {
                if let Some(c) = level.channels.get(id) {
                    total.add(c);
                }
            }
            total
        })
        .collect()
}

/// A chart's metric: its label, and a level's value and its label.
type Metric = (&'static str, fn(&Counts) -> (f64, String));

const METRICS: &[Metric] = &[
    ("questions joined", |c| {
        let f = &c.figures;
        (f.join_rate(), super::share(f.joined, f.questions))
    }),
    ("exchanges intruded", |c| {
        let f = &c.figures;
        (f.intrusion_rate(), super::share(f.intruded, f.exchanges))
    }),
    ("precision", |c| {
        let f = &c.figures;
        (f.precision(), super::share(f.on_question, f.unprompted))
    }),
    ("preempted", |c| {
        let f = &c.figures;
        (f.preempted_rate(), super::share(f.preempted, f.unprompted))
    }),
    ("unprompted posts per channel-hour", |c| {
        let per = c.figures.per_hour();
        (per, format!("{per:.2}"))
    }),
    ("LLM judgment calls", |c| {
        (c.llm_calls as f64, c.llm_calls.to_string())
    }),
];

/// The rates are drawn against 100 %; the other figures against the
/// largest level's.
const RATES: usize = 4;

fn charts(report: &Report, shown: &[ChannelId]) -> Vec<Chart> {
    const HEIGHT: f64 = 100.0;
    let totals = totals(report, shown);
    METRICS
        .iter()
        .enumerate()
        .map(|(i, (label, value))| {
            let values: Vec<(f64, String)> = totals.iter().map(value).collect();
            let top = if i < RATES {
                1.0
            } else {
                values.iter().map(|(v, _)| *v).fold(0.0, f64::max)
            };
            let bars = report
                .levels
                .iter()
                .zip(values)
                .enumerate()
                .map(|(j, (level, (v, text)))| {
                    let height = if top > 0.0 { v / top * HEIGHT } else { 0.0 };
                    let label = if text == "–" {
                        text.clone()
                    } else if i < RATES {
                        format!("{:.0}%", v * 100.0)
                    } else {
                        text.clone()
                    };
                    Bar {
                        label,
                        level: level.level.name(),
                        x: 10.0 + j as f64 * 60.0,
                        y: 20.0 + HEIGHT - height,
                        height,
                        value: text,
                        current: level.level == report.current,
                    }
                })
                .collect();
            Chart { label, bars }
        })
        .collect()
}

/// `text` cut to [`SHORT_TEXT_CHARS`] unless the whole is asked for.
fn shortened(text: &str, options: HtmlOptions) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if options.full_text || flat.chars().count() <= SHORT_TEXT_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(SHORT_TEXT_CHARS).collect();
    cut.push('…');
    cut
}

fn when(ts: Ts) -> String {
    ts.to_datetime().format("%Y-%m-%d %H:%M").to_string()
}

/// A channel's timeline and its cases.
fn channel(
    report: &Report,
    id: &ChannelId,
    said: &[&Said],
    marks: &[&[&Mark]],
    options: HtmlOptions,
) -> ChannelView {
    let step = (PLOT / said.len().max(1) as f64).clamp(MIN_STEP, MAX_STEP);
    let by_ts: HashMap<Ts, &Said> = said.iter().map(|m| (m.ts, *m)).collect();
    // A message's place: its index; a post's, after the messages before it.
    let x_of = |i: usize| LEFT + i as f64 * step + step / 2.0;
    let place = |ts: Ts| said.partition_point(|m| m.ts < ts);
    let x_at = |ts: Ts| LEFT + place(ts) as f64 * step;
    let x_on = |ts: Ts| match said.binary_search_by_key(&ts, |m| m.ts) {
        Ok(i) => x_of(i),
        Err(i) => LEFT + i as f64 * step,
    };
    let line = |m: &Said| {
        format!(
            "{} {}: {}",
            when(m.ts),
            m.user_name,
            shortened(&m.text, options)
        )
    };
    let about = |ts: Ts| by_ts.get(&ts).map(|m| line(m)).unwrap_or_else(|| when(ts));
    let anchor = format!("c-{id}");
    let ticks = said
        .iter()
        .enumerate()
        .map(|(i, m)| Tick {
            x: x_of(i),
            question: m.question,
            title: line(m),
        })
        .collect();
    let first_level = report.levels.first();
    let exchanges = first_level
        .and_then(|l| l.channels.get(id))
        .map(|c| {
            c.figures
                .cases
                .exchanges
                .iter()
                .map(|e| Band {
                    x: x_on(e.first) - step / 2.0,
                    width: (x_on(e.last) - x_on(e.first)) + step,
                    title: format!("exchange of two people: {}", about(e.root)),
                    href: None,
                })
                .collect()
        })
        .unwrap_or_default();
    let mut rows = Vec::new();
    let mut cases = Vec::new();
    for (li, level) in report.levels.iter().enumerate() {
        let name = level.level.name();
        let case_id = |kind: &str, n: usize| format!("{anchor}-{name}-{kind}-{n}");
        let c = level.channels.get(id).cloned().unwrap_or_default();
        let mut list = LevelCases {
            level: name,
            open: level.level == report.current,
            joined: Vec::new(),
            missed: Vec::new(),
            intruded: Vec::new(),
            preempted: Vec::new(),
        };
        let mut questions = Vec::new();
        for (n, (ts, joined)) in c.figures.cases.questions.iter().enumerate() {
            let id = case_id(if *joined { "joined" } else { "missed" }, n);
            let case = Case {
                id: id.clone(),
                when: when(*ts),
                text: about(*ts),
            };
            if *joined {
                list.joined.push(case);
            } else {
                list.missed.push(case);
            }
            questions.push(QuestionMark {
                x: x_on(*ts),
                joined: *joined,
                title: format!(
                    "{}: {}",
                    if *joined {
                        "question joined"
                    } else {
                        "question left"
                    },
                    about(*ts)
                ),
                href: format!("#{id}"),
            });
        }
        let mut intrusions = Vec::new();
        for (n, e) in c.figures.cases.exchanges.iter().enumerate() {
            if !e.intruded {
                continue;
            }
            let id = case_id("intruded", n);
            list.intruded.push(Case {
                id: id.clone(),
                when: when(e.first),
                text: about(e.root),
            });
            intrusions.push(Band {
                x: x_on(e.first) - step / 2.0,
                width: (x_on(e.last) - x_on(e.first)) + step,
                title: format!("exchange intruded on: {}", about(e.root)),
                href: Some(format!("#{id}")),
            });
        }
        let preempted: Vec<Ts> = c.figures.cases.preempted.clone();
        let marks = marks
            .get(li)
            .copied()
            .unwrap_or_default()
            .iter()
            .map(|m| {
                let is_preempted =
                    m.unprompted && m.kind != MarkKind::Reaction && preempted.contains(&m.ts);
                let href = is_preempted.then(|| {
                    let n = list.preempted.len();
                    let id = case_id("preempted", n);
                    list.preempted.push(Case {
                        id: id.clone(),
                        when: when(m.ts),
                        text: mark_title(m, options),
                    });
                    format!("#{id}")
                });
                let x = if m.kind == MarkKind::Reaction {
                    x_on(m.ts)
                } else {
                    x_at(m.ts)
                };
                MarkView {
                    x,
                    kind: m.kind.name(),
                    unprompted: m.unprompted,
                    preempted: is_preempted,
                    title: format!("{name}: {}", mark_title(m, options)),
                    href,
                }
            })
            .collect();
        rows.push(LevelRow {
            level: name,
            y: LEVELS_Y + li as f64 * LEVEL_ROW,
            current: level.level == report.current,
            marks,
            questions,
            intrusions,
        });
        cases.push(list);
    }
    let span = match (said.first(), said.last()) {
        (Some(a), Some(b)) => format!("{} – {} UTC", when(a.ts), when(b.ts)),
        _ => "no messages".to_owned(),
    };
    ChannelView {
        anchor,
        name: report.name(id),
        private: !report.public.contains(id),
        messages: said.len(),
        span,
        width: (LEFT + said.len() as f64 * step + 20.0).max(600.0),
        height: LEVELS_Y + report.levels.len() as f64 * LEVEL_ROW + 6.0,
        ticks,
        exchanges,
        rows,
        cases,
    }
}

/// A mark's details line: what it was, why, and what it said.
fn mark_title(m: &Mark, options: HtmlOptions) -> String {
    let kind = match (m.kind, m.unprompted) {
        (MarkKind::Opener, _) => "topic opened".to_owned(),
        (kind, true) => format!("{} (unprompted)", kind.name()),
        (kind, false) => format!("{} (called)", kind.name()),
    };
    let mut title = format!("{} {kind}", when(m.ts));
    if let Some(ruling) = &m.ruling {
        title.push_str(&format!(" · {ruling}"));
    }
    let text = if m.kind == MarkKind::Reaction {
        format!(":{}:", m.text)
    } else {
        shortened(&m.text, options)
    };
    title.push_str(&format!(" · {text}"));
    title
}
