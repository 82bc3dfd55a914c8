//! `myao eval --html`: the report as one self-contained page (inline CSS
//! and SVG, no script, nothing fetched), to look at where the bot would
//! have spoken.
//!
//! The page holds the figures per level as small bar charts, the current
//! level marked, a chart of the levels beside the room's curve (questions
//! joined against posts preempted, [`super::curve`]), and per channel a
//! timeline: the people's messages as a strip, the two-person exchanges
//! under it, and one row per level with the bot's posts and reactions, the
//! questions it joined or missed and the exchanges it intruded on. Each
//! mark says on hover what it is (with the rule stage's score and
//! signals), and each highlighted case links to its line in the lists
//! under the timeline.
//!
//! The page is a file that gets shared: private channels, group DMs and
//! DMs are left out unless asked for, and messages are shortened unless
//! asked for in full.

use std::collections::HashMap;

use minijinja::{AutoEscape, Environment};
use myao_domain::{ChannelId, Ts};
use serde::Serialize;

use super::figures::{self, Cases, Exchange};
use super::report::{totals, Counts, LevelReport, Mark, MarkKind, Report, Said};

mod room_chart;

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
    room: room_chart::RoomChart,
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
        room: room_chart::chart(report, &shown),
        channels,
    };
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.add_template("eval-report.html", TEMPLATE)?;
    env.get_template("eval-report.html")?
        .render(minijinja::Value::from_serialize(&page))
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
    let axis = Axis::new(said, options);
    let anchor = format!("c-{id}");
    let exchanges = report
        .levels
        .first()
        .and_then(|l| l.channels.get(id))
        .map(|c| {
            c.figures
                .cases
                .exchanges
                .iter()
                .map(|e| {
                    let title = format!("exchange of two people: {}", axis.about(e.root));
                    axis.band(e, title, None)
                })
                .collect()
        })
        .unwrap_or_default();
    let (rows, cases) = report
        .levels
        .iter()
        .enumerate()
        .map(|(li, level)| {
            let marks = marks.get(li).copied().unwrap_or_default();
            level_row(&axis, report, level, li, id, &anchor, marks)
        })
        .unzip();
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
        width: (LEFT + said.len() as f64 * axis.step + 20.0).max(600.0),
        height: LEVELS_Y + report.levels.len() as f64 * LEVEL_ROW + 6.0,
        ticks: axis.ticks(),
        exchanges,
        rows,
        cases,
    }
}

/// One level's row of a channel's timeline (its marks, the questions and
/// the exchanges intruded on), and the cases it links to, whose ids begin
/// with the channel's `anchor`.
fn level_row(
    axis: &Axis,
    report: &Report,
    level: &LevelReport,
    li: usize,
    id: &ChannelId,
    anchor: &str,
    marks: &[&Mark],
) -> (LevelRow, LevelCases) {
    let name = level.level.name();
    let ids = CaseIds(format!("{anchor}-{name}"));
    let none = figures::Cases::default();
    let found = level.channels.get(id).map_or(&none, |c| &c.figures.cases);
    let mut list = LevelCases {
        level: name,
        open: level.level == report.current,
        joined: Vec::new(),
        missed: Vec::new(),
        intruded: Vec::new(),
        preempted: Vec::new(),
    };
    let questions = axis.questions(found, &ids, &mut list);
    let intrusions = axis.intrusions(found, &ids, &mut list);
    let marks = axis.marks(marks, &found.preempted, name, &ids, &mut list);
    let row = LevelRow {
        level: name,
        y: LEVELS_Y + li as f64 * LEVEL_ROW,
        current: level.level == report.current,
        marks,
        questions,
        intrusions,
    };
    (row, list)
}

/// The ids of one level's cases in a channel: `c-C1-chatty-missed-3`.
struct CaseIds(String);

impl CaseIds {
    /// The id of the `n`th case of its `kind`.
    fn id(&self, kind: &str, n: usize) -> String {
        format!("{}-{kind}-{n}", self.0)
    }
}

/// A channel's timeline: where its messages and the bot's posts stand, and
/// how a message reads in a title.
struct Axis<'a> {
    said: &'a [&'a Said],
    by_ts: HashMap<Ts, &'a Said>,
    /// The width of one message.
    step: f64,
    options: HtmlOptions,
}

impl<'a> Axis<'a> {
    fn new(said: &'a [&'a Said], options: HtmlOptions) -> Axis<'a> {
        Axis {
            said,
            by_ts: said.iter().map(|m| (m.ts, *m)).collect(),
            step: (PLOT / said.len().max(1) as f64).clamp(MIN_STEP, MAX_STEP),
            options,
        }
    }

    /// The place of the `i`th message: the middle of its step.
    fn x_of(&self, i: usize) -> f64 {
        LEFT + i as f64 * self.step + self.step / 2.0
    }

    /// A post's place: after the messages before it.
    fn x_at(&self, ts: Ts) -> f64 {
        LEFT + self.said.partition_point(|m| m.ts < ts) as f64 * self.step
    }

    /// The place of the message `ts`, or else where it would stand.
    fn x_on(&self, ts: Ts) -> f64 {
        match self.said.binary_search_by_key(&ts, |m| m.ts) {
            Ok(i) => self.x_of(i),
            Err(i) => LEFT + i as f64 * self.step,
        }
    }

    /// A message as a title reads it: when, who, what.
    fn line(&self, m: &Said) -> String {
        format!(
            "{} {}: {}",
            when(m.ts),
            m.user_name,
            shortened(&m.text, self.options)
        )
    }

    /// The message `ts`, or its time when it is not in the channel.
    fn about(&self, ts: Ts) -> String {
        self.by_ts
            .get(&ts)
            .map(|m| self.line(m))
            .unwrap_or_else(|| when(ts))
    }

    /// A band over an exchange, from its first message to its last.
    fn band(&self, e: &Exchange, title: String, href: Option<String>) -> Band {
        Band {
            x: self.x_on(e.first) - self.step / 2.0,
            width: (self.x_on(e.last) - self.x_on(e.first)) + self.step,
            title,
            href,
        }
    }

    /// One tick per message, questions marked.
    fn ticks(&self) -> Vec<Tick> {
        self.said
            .iter()
            .enumerate()
            .map(|(i, m)| Tick {
                x: self.x_of(i),
                question: m.question,
                title: self.line(m),
            })
            .collect()
    }

    /// The questions left unanswered, joined or missed: listed as cases,
    /// and marked on the row.
    fn questions(&self, found: &Cases, ids: &CaseIds, list: &mut LevelCases) -> Vec<QuestionMark> {
        let mut questions = Vec::new();
        for (n, (ts, joined)) in found.questions.iter().enumerate() {
            let id = ids.id(if *joined { "joined" } else { "missed" }, n);
            let case = Case {
                id: id.clone(),
                when: when(*ts),
                text: self.about(*ts),
            };
            if *joined {
                list.joined.push(case);
            } else {
                list.missed.push(case);
            }
            questions.push(QuestionMark {
                x: self.x_on(*ts),
                joined: *joined,
                title: format!(
                    "{}: {}",
                    if *joined {
                        "question joined"
                    } else {
                        "question left"
                    },
                    self.about(*ts)
                ),
                href: format!("#{id}"),
            });
        }
        questions
    }

    /// The exchanges intruded on: listed as cases, and banded on the row.
    fn intrusions(&self, found: &Cases, ids: &CaseIds, list: &mut LevelCases) -> Vec<Band> {
        let mut intrusions = Vec::new();
        for (n, e) in found.exchanges.iter().enumerate() {
            if !e.intruded {
                continue;
            }
            let id = ids.id("intruded", n);
            list.intruded.push(Case {
                id: id.clone(),
                when: when(e.first),
                text: self.about(e.root),
            });
            let title = format!("exchange intruded on: {}", self.about(e.root));
            intrusions.push(self.band(e, title, Some(format!("#{id}"))));
        }
        intrusions
    }

    /// The level's posts and reactions on the row; a preempted post (one
    /// of `preempted`) is listed as a case too.
    fn marks(
        &self,
        marks: &[&Mark],
        preempted: &[Ts],
        level: &str,
        ids: &CaseIds,
        list: &mut LevelCases,
    ) -> Vec<MarkView> {
        marks
            .iter()
            .map(|m| {
                let is_preempted =
                    m.unprompted && m.kind != MarkKind::Reaction && preempted.contains(&m.ts);
                let href = is_preempted.then(|| {
                    let id = ids.id("preempted", list.preempted.len());
                    list.preempted.push(Case {
                        id: id.clone(),
                        when: when(m.ts),
                        text: mark_title(m, self.options),
                    });
                    format!("#{id}")
                });
                let x = if m.kind == MarkKind::Reaction {
                    self.x_on(m.ts)
                } else {
                    self.x_at(m.ts)
                };
                MarkView {
                    x,
                    kind: m.kind.name(),
                    unprompted: m.unprompted,
                    preempted: is_preempted,
                    title: format!("{level}: {}", mark_title(m, self.options)),
                    href,
                }
            })
            .collect()
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
