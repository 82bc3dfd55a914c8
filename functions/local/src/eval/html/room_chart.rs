//! The page's chart of the room's curve: questions joined against posts
//! preempted, for each wait alone (the curve) and each level that speaks
//! (a point beside it, its distance to the curve drawn). Over the channels
//! the page shows, as its other charts are.

use myao_domain::ChannelId;
use serde::Serialize;

use super::super::curve::{self, RoomPoint};
use super::super::report::{totals, Report};

/// The chart's size, and the plot's edges inside it: room on the left for
/// the joined axis, below for the preempted one, and on the right for the
/// labels of the points preempted the most.
const WIDTH: f64 = 440.0;
const HEIGHT: f64 = 280.0;
const LEFT: f64 = 50.0;
const RIGHT: f64 = 360.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 236.0;

/// The chart, laid out for the template.
#[derive(Serialize)]
pub(super) struct RoomChart {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x_ticks: Vec<AxisTick>,
    y_ticks: Vec<AxisTick>,
    /// The curve through the waits (the line [`curve::room_joined_at`]
    /// reads), as a polyline's points; empty when no question was left.
    line: String,
    /// The curve carried on flat beyond its ends, as the distances read it.
    ends: Vec<Flat>,
    waits: Vec<Dot>,
    levels: Vec<Dot>,
    /// What is not drawn: the levels that made no unprompted post.
    notes: Vec<String>,
}

#[derive(Serialize)]
struct AxisTick {
    at: f64,
    label: String,
}

#[derive(Serialize)]
struct Flat {
    x1: f64,
    x2: f64,
    y: f64,
}

/// A point, or several that fall on one spot (three levels alike, or waits
/// preempted and joining alike): one dot, their labels together.
#[derive(Serialize)]
struct Dot {
    x: f64,
    y: f64,
    label: String,
    title: String,
    current: bool,
    /// For a level: where the curve stands at its preempted share, when it
    /// is not at the dot itself.
    room_y: Option<f64>,
    /// Where its label starts or ends, and its baseline
    /// ([`Dot::place_label`]).
    label_x: f64,
    label_y: f64,
    anchor: &'static str,
}

impl Dot {
    /// The box its label would take at `(side, dy)`: to the left of the
    /// dot (`side` -1) or its right (1), its baseline `dy` below it. A
    /// label's width is rough: its characters at 10 px.
    fn label_box(&self, (side, dy): (f64, f64)) -> Area {
        let width = self.label.chars().count() as f64 * 5.5;
        let near = self.x + side * 8.0;
        let far = near + side * width;
        Area {
            left: near.min(far),
            right: near.max(far),
            top: self.y + dy - 9.0,
            bottom: self.y + dy + 1.0,
        }
    }

    /// The dot's own box (a level's, the larger).
    fn area(&self) -> Area {
        Area {
            left: self.x - 5.0,
            right: self.x + 5.0,
            top: self.y - 5.0,
            bottom: self.y + 5.0,
        }
    }

    /// The label at the first of `places` that stays on the chart and
    /// clear of the labels `taken`, or else the first on the chart: points
    /// close together (two long waits preempted alike) must not print
    /// their labels over each other.
    fn place_label(&mut self, places: &[(f64, f64)], taken: &mut Vec<Area>) {
        // Off the axes' labels too: left of the plot, and under it.
        let on_chart = |a: &Area| {
            a.left >= LEFT - 2.0 && a.right <= WIDTH && a.top >= 0.0 && a.bottom <= BOTTOM
        };
        let clear = |a: &Area| !taken.iter().any(|t| t.overlaps(a));
        let boxes: Vec<((f64, f64), Area)> = places
            .iter()
            .map(|&place| (place, self.label_box(place)))
            .filter(|(_, a)| on_chart(a))
            .collect();
        let Some(((side, dy), area)) = boxes
            .iter()
            .find(|(_, a)| clear(a))
            .or(boxes.first())
            .copied()
        else {
            return;
        };
        taken.push(area);
        self.label_x = rounded(self.x + side * 8.0);
        self.label_y = rounded(self.y + dy);
        self.anchor = if side < 0.0 { "end" } else { "start" };
    }
}

/// A label's box on the chart.
#[derive(Clone, Copy)]
struct Area {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Area {
    fn overlaps(&self, other: &Area) -> bool {
        self.left < other.right
            && other.left < self.right
            && self.top < other.bottom
            && other.top < self.bottom
    }
}

/// Where a wait's label may go, best first: above the curve on its left,
/// then under it on its right. A level's: on its right, then its left,
/// then under or over it.
const WAIT_LABEL: [(f64, f64); 4] = [(-1.0, -6.0), (1.0, 14.0), (1.0, -6.0), (-1.0, 14.0)];
const LEVEL_LABEL: [(f64, f64); 4] = [(1.0, 4.0), (-1.0, 4.0), (1.0, 16.0), (1.0, -8.0)];

/// The chart of `report`'s curve and levels, over the channels `shown`.
pub(super) fn chart(report: &Report, shown: &[ChannelId]) -> RoomChart {
    let room: Vec<RoomPoint> = report.room.iter().map(|p| p.over(shown)).collect();
    let line = curve::line(&room);
    let (levels, notes) = level_points(report, shown, &room);
    let wider = levels.iter().map(|(p, _, _)| *p);
    let scale = Scale::new(line.iter().map(|p| p.preempted_rate).chain(wider));
    let mut waits = together(wait_dots(&room, &scale), " min");
    let mut levels = together(
        levels
            .into_iter()
            .map(|(preempted, joined, dot)| Dot {
                x: scale.x(preempted),
                y: scale.y(joined),
                room_y: dot
                    .room_y
                    .map(|j| scale.y(j))
                    .filter(|at| (at - scale.y(joined)).abs() >= 1.0),
                ..dot
            })
            .collect(),
        "",
    );
    // The dots first: a label must not hide one.
    let mut taken: Vec<Area> = waits.iter().chain(&levels).map(Dot::area).collect();
    for wait in &mut waits {
        wait.place_label(&WAIT_LABEL, &mut taken);
    }
    for level in &mut levels {
        level.place_label(&LEVEL_LABEL, &mut taken);
    }
    RoomChart {
        width: WIDTH,
        height: HEIGHT,
        left: LEFT,
        right: RIGHT,
        top: TOP,
        bottom: BOTTOM,
        x_ticks: scale.x_ticks(),
        y_ticks: scale.y_ticks(),
        line: line
            .iter()
            .map(|p| format!("{},{}", scale.x(p.preempted_rate), scale.y(p.join_rate)))
            .collect::<Vec<_>>()
            .join(" "),
        ends: ends(&line, &scale),
        waits,
        levels,
        notes,
    }
}

/// A dot for each wait, on `scale`, labelled with its minutes alone: the
/// unit goes once after the waits that share a spot ([`together`]).
fn wait_dots(room: &[RoomPoint], scale: &Scale) -> Vec<Dot> {
    room.iter()
        .filter(|p| p.questions > 0)
        .map(|p| Dot {
            x: scale.x(p.preempted_rate),
            y: scale.y(p.join_rate),
            label: p.wait_minutes.to_string(),
            title: format!(
                "a wait alone of {} min: questions joined {:.1}%, preempted {:.1}%",
                p.wait_minutes,
                100.0 * p.join_rate,
                100.0 * p.preempted_rate
            ),
            current: false,
            room_y: None,
            label_x: 0.0,
            label_y: 0.0,
            anchor: "end",
        })
        .collect()
}

/// Each level that speaks, as its preempted share, its joined share and
/// its dot (placed once the scale is known); and a note for each that made
/// no unprompted post, and has no preempted share to stand at.
fn level_points(
    report: &Report,
    shown: &[ChannelId],
    room: &[RoomPoint],
) -> (Vec<(f64, f64, Dot)>, Vec<String>) {
    let mut notes = Vec::new();
    let mut levels = Vec::new();
    for (level, counts) in report.levels.iter().zip(totals(report, shown)) {
        if level.level.thresholds().is_none() {
            continue;
        }
        let name = level.level.name();
        let beside = curve::beside(&counts.figures, room);
        let Some(preempted) = beside.preempted else {
            notes.push(format!("{name}: no unprompted post"));
            continue;
        };
        levels.push((
            preempted,
            beside.joined,
            Dot {
                x: 0.0,
                y: 0.0,
                label: name.to_owned(),
                title: beside.describe(name),
                current: level.level == report.current,
                room_y: beside.room_joined,
                label_x: 0.0,
                label_y: 0.0,
                anchor: "start",
            },
        ));
    }
    (levels, notes)
}

/// The dots that fall on one spot as one, their labels joined and
/// followed by `unit`, their titles one a line.
fn together(dots: Vec<Dot>, unit: &str) -> Vec<Dot> {
    let mut out: Vec<Dot> = Vec::new();
    for dot in dots {
        match out
            .iter_mut()
            .find(|d| (d.x - dot.x).abs() < 1.0 && (d.y - dot.y).abs() < 1.0)
        {
            Some(d) => {
                d.label = format!("{}, {}", d.label, dot.label);
                d.title = format!("{}\n{}", d.title, dot.title);
                d.current |= dot.current;
            }
            None => out.push(dot),
        }
    }
    for d in &mut out {
        d.label.push_str(unit);
    }
    out
}

/// The curve carried on flat from the plot's left edge to its least
/// preempted point, and from its most preempted one to the right edge:
/// what a level preempted less, or more, than every wait is read against.
fn ends(line: &[&RoomPoint], scale: &Scale) -> Vec<Flat> {
    let (Some(first), Some(last)) = (line.first(), line.last()) else {
        return Vec::new();
    };
    let mut flats = Vec::new();
    let start = scale.x(first.preempted_rate);
    if start > LEFT {
        flats.push(Flat {
            x1: LEFT,
            x2: start,
            y: scale.y(first.join_rate),
        });
    }
    let end = scale.x(last.preempted_rate);
    if end < RIGHT {
        flats.push(Flat {
            x1: end,
            x2: RIGHT,
            y: scale.y(last.join_rate),
        });
    }
    flats
}

/// Where a share stands on the plot: joined from 0 to 100 % upwards, and
/// preempted from 0 to the tenth above the most preempted point, so that
/// the points (a few tenths apart at most) are not crowded at the left.
struct Scale {
    /// The preempted axis's end, in tenths.
    tenths: u32,
}

impl Scale {
    fn new(preempted: impl Iterator<Item = f64>) -> Scale {
        let most = preempted.fold(0.0, f64::max).clamp(0.0, 1.0);
        // A share a float's hair over a whole tenth (0.30000000001) ends
        // the axis on that tenth, not on the next.
        let mut tenths = ((most * 10.0 - 1e-9).ceil() as u32).max(1);
        // Past half, a tick every 20 %: an even end has one.
        if tenths > 5 {
            tenths += tenths % 2;
        }
        Scale { tenths }
    }

    fn x(&self, preempted: f64) -> f64 {
        let end = f64::from(self.tenths) / 10.0;
        rounded(LEFT + preempted / end * (RIGHT - LEFT))
    }

    fn y(&self, joined: f64) -> f64 {
        rounded(BOTTOM - joined * (BOTTOM - TOP))
    }

    fn x_ticks(&self) -> Vec<AxisTick> {
        // Three ticks at least, six at most: in percent.
        let step = match self.tenths {
            0..=2 => 5,
            3..=5 => 10,
            _ => 20,
        };
        (0..=self.tenths * 10)
            .step_by(step)
            .map(|percent| AxisTick {
                at: self.x(f64::from(percent) / 100.0),
                label: format!("{percent}%"),
            })
            .collect()
    }

    fn y_ticks(&self) -> Vec<AxisTick> {
        (0..=4)
            .map(|q| AxisTick {
                at: self.y(f64::from(q) / 4.0),
                label: format!("{}%", q * 25),
            })
            .collect()
    }
}

/// A coordinate to a tenth of a pixel: the page need not carry more.
fn rounded(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preempted_axis_ends_on_the_tenth_above_the_most_preempted() {
        assert_eq!(Scale::new([0.0].into_iter()).tenths, 1);
        assert_eq!(Scale::new([0.169, 0.301].into_iter()).tenths, 4);
        assert_eq!(Scale::new([0.3].into_iter()).tenths, 3);
        assert_eq!(Scale::new([0.61].into_iter()).tenths, 8);
        let scale = Scale::new([0.25].into_iter());
        assert_eq!((scale.x(0.0), scale.x(0.3)), (LEFT, RIGHT));
        assert_eq!((scale.y(0.0), scale.y(1.0)), (BOTTOM, TOP));
        let labels: Vec<String> = scale.x_ticks().into_iter().map(|t| t.label).collect();
        assert_eq!(labels, ["0%", "10%", "20%", "30%"]);
        let labels: Vec<String> = Scale::new([0.02].into_iter())
            .x_ticks()
            .into_iter()
            .map(|t| t.label)
            .collect();
        assert_eq!(labels, ["0%", "5%", "10%"]);
        let ends: Vec<String> = Scale::new([0.7].into_iter())
            .x_ticks()
            .into_iter()
            .map(|t| t.label)
            .collect();
        assert_eq!(ends.last().map(String::as_str), Some("80%"));
    }

    fn dot(x: f64, y: f64, label: &str, current: bool) -> Dot {
        Dot {
            x,
            y,
            label: label.to_owned(),
            title: label.to_owned(),
            current,
            room_y: None,
            label_x: 0.0,
            label_y: 0.0,
            anchor: "end",
        }
    }

    #[test]
    fn dots_on_one_spot_are_drawn_once_with_their_labels_together() {
        let dots = together(
            vec![
                dot(5.0, 10.0, "20", false),
                dot(5.2, 10.0, "25", true),
                dot(400.0, 10.0, "10", false),
            ],
            " min",
        );
        let labels: Vec<(&str, bool)> =
            dots.iter().map(|d| (d.label.as_str(), d.current)).collect();
        assert_eq!(labels, [("20, 25 min", true), ("10 min", false)]);
        assert_eq!(dots[0].title, "20\n25");
    }

    #[test]
    fn labels_keep_on_the_chart_and_clear_of_each_other() {
        // A dot in the way of the first place below.
        let mut taken = vec![dot(80.0, 112.0, "quiet", false).area()];
        // Near the left edge, the label goes to the right of its dot, and
        // over it when the place below is taken.
        let mut edge = dot(LEFT, 100.0, "20, 25 min", false);
        edge.place_label(&WAIT_LABEL, &mut taken);
        assert_eq!(
            (edge.label_x, edge.label_y, edge.anchor),
            (58.0, 94.0, "start")
        );
        let mut first = dot(200.0, 100.0, "25 min", false);
        first.place_label(&WAIT_LABEL, &mut taken);
        assert_eq!(
            (first.label_x, first.label_y, first.anchor),
            (192.0, 94.0, "end")
        );
        // A wait close to it: under the curve, on the right.
        let mut close = dot(196.0, 104.0, "29 min", false);
        close.place_label(&WAIT_LABEL, &mut taken);
        assert_eq!(
            (close.label_x, close.label_y, close.anchor),
            (204.0, 118.0, "start")
        );
    }
}
