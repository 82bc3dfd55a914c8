//! The room's curve, and each level beside it.
//!
//! A wait trades questions joined for posts preempted: the longer it is,
//! the fewer of both. A level makes the same trade by its rules, so its
//! questions joined are read against the curve at its own preempted share:
//! what a wait alone, preempted as often, would join. The distance between
//! the two is what the level's rules come to in questions joined, with
//! preemption the same. The curve has no rule of the bot's in it (see
//! [`room_curve`]), so a level may well stand below it.

use std::collections::BTreeMap;

use chrono::Duration;
use myao_domain::{ChannelId, Message, Ts};
use serde::Serialize;

use super::figures::{self, left_to_ask, Figures, Post, Threads};

/// The waits [`room_curve`] tries, in minutes: from the least that leaves a
/// question unanswered to the last that still joins it.
pub const ROOM_WAITS: [i64; 5] = [10, 15, 20, 25, 29];

/// What one wait alone would come to: a post after it on every question
/// people left unanswered and nobody had answered by then.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoomPoint {
    pub wait_minutes: i64,
    /// The questions people left (the same at every wait).
    pub questions: usize,
    /// The share of the questions people left that it joined.
    pub join_rate: f64,
    /// The share of those posts another person's turn followed.
    pub preempted_rate: f64,
    /// The figures per channel, kept for a point over some of them
    /// ([`RoomPoint::over`]).
    #[serde(skip)]
    pub channels: BTreeMap<ChannelId, Figures>,
}

impl RoomPoint {
    fn of(wait_minutes: i64, channels: BTreeMap<ChannelId, Figures>) -> RoomPoint {
        let all = figures::total(&channels);
        RoomPoint {
            wait_minutes,
            questions: all.questions,
            join_rate: all.join_rate(),
            preempted_rate: all.preempted_rate(),
            channels,
        }
    }

    /// The point over the channels `shown` alone: a page that leaves the
    /// private channels out must leave their questions out of its curve
    /// too.
    pub fn over(&self, shown: &[ChannelId]) -> RoomPoint {
        let channels = self
            .channels
            .iter()
            .filter(|(id, _)| shown.contains(id))
            .map(|(id, f)| (id.clone(), f.clone()))
            .collect();
        RoomPoint::of(self.wait_minutes, channels)
    }
}

/// The room's own trade-off between joining and preempting, from the
/// people's messages alone: for each of [`ROOM_WAITS`], a post in its
/// thread on every question people left, measured as the bot's posts are.
/// No rule of the bot's is in it: it answers the questions put to someone
/// by name and those inside a live exchange too, which the levels leave to
/// their people, so a level joins fewer. What it shows is what a wait can
/// do: the preempted share at its latest wait is the least any wait alone
/// gives on these questions.
pub fn room_curve(people: &[Message]) -> Vec<RoomPoint> {
    let threads = Threads::of(people, &[]);
    ROOM_WAITS
        .iter()
        .map(|&minutes| {
            let wait = Duration::minutes(minutes);
            let posts: Vec<Post> = people
                .iter()
                .filter(|q| left_to_ask(q))
                .filter(|q| {
                    let (at, asked) = (q.ts.to_datetime(), threads.asked(q));
                    !people.iter().any(|m| {
                        m.ts > q.ts
                            && m.user != q.user
                            && m.ts.to_datetime() - at <= wait
                            && asked.with(m)
                    })
                })
                .map(|q| Post {
                    channel: q.channel.clone(),
                    ts: Ts::from_datetime(q.ts.to_datetime() + wait),
                    thread_ts: Some(q.thread_ts.unwrap_or(q.ts)),
                    unprompted: true,
                    engaged: false,
                })
                .collect();
            RoomPoint::of(minutes, figures::measure(people, &posts))
        })
        .collect()
}

/// The curve as [`room_joined_at`] reads it: its points by preempted
/// share, one per share. The curve is monotone in practice (a longer wait
/// joins fewer and is preempted less), but nothing makes it so: of points
/// preempted alike, the one that joins the most stands for them (the
/// latest wait, of equals), as the wait one would choose. Empty when no
/// question was left.
pub fn line(curve: &[RoomPoint]) -> Vec<&RoomPoint> {
    let mut points: Vec<&RoomPoint> = curve.iter().filter(|p| p.questions > 0).collect();
    points.sort_by(|a, b| {
        a.preempted_rate
            .total_cmp(&b.preempted_rate)
            .then(b.join_rate.total_cmp(&a.join_rate))
            .then(b.wait_minutes.cmp(&a.wait_minutes))
    });
    points.dedup_by(|later, kept| later.preempted_rate == kept.preempted_rate);
    points
}

/// The share of the questions people left that a wait alone joins at the
/// preempted share `preempted`: between two waits, on the straight line
/// between them; preempted less than any wait is, the least preempted
/// wait's (the latest, in practice), and more than any, the most preempted
/// one's (the earliest). `None` when no question was left: there is no
/// curve.
pub fn room_joined_at(curve: &[RoomPoint], preempted: f64) -> Option<f64> {
    let line = line(curve);
    let (first, last) = (line.first()?, line.last()?);
    if preempted <= first.preempted_rate {
        return Some(first.join_rate);
    }
    if preempted >= last.preempted_rate {
        return Some(last.join_rate);
    }
    line.windows(2)
        .find(|w| preempted <= w[1].preempted_rate)
        .map(|w| {
            let (a, b) = (w[0], w[1]);
            let along = (preempted - a.preempted_rate) / (b.preempted_rate - a.preempted_rate);
            a.join_rate + along * (b.join_rate - a.join_rate)
        })
}

/// A level's figures beside the room's curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Beside<'a> {
    /// The share of the questions people left that the level joined.
    pub joined: f64,
    /// The share of its unprompted posts preempted; `None` when it made
    /// none (a share of nothing would read as never preempted).
    pub preempted: Option<f64>,
    /// What a wait alone joins, preempted as often ([`room_joined_at`]);
    /// `None` with nothing to compare: no unprompted post, or no question
    /// left.
    pub room_joined: Option<f64>,
    /// The room's joined less the level's: how many more of the questions
    /// a wait alone, preempted as often, would join. A share, as every
    /// rate of the JSON report is: 0.072 is 7.2 points.
    pub distance: Option<f64>,
    /// The curve's end the level was read against, when it is preempted
    /// less than every wait, or more: no wait alone is preempted as
    /// seldom (or as often), and the nearest one stands in.
    #[serde(skip)]
    pub beyond: Option<&'a RoomPoint>,
}

/// Where a level with these figures stands beside `curve`.
pub fn beside<'a>(figures: &Figures, curve: &'a [RoomPoint]) -> Beside<'a> {
    let joined = figures.join_rate();
    let preempted = (figures.unprompted > 0).then(|| figures.preempted_rate());
    let room_joined = preempted.and_then(|p| room_joined_at(curve, p));
    let line = line(curve);
    let beyond = preempted.and_then(|p| match (line.first(), line.last()) {
        (Some(first), _) if p < first.preempted_rate => Some(*first),
        (_, Some(last)) if p > last.preempted_rate => Some(*last),
        _ => None,
    });
    Beside {
        joined,
        preempted,
        room_joined,
        distance: room_joined.map(|room| room - joined),
        beyond,
    }
}

impl Beside<'_> {
    /// The level's line under the curve's in the text report.
    pub fn describe(&self, level: &str) -> String {
        let (Some(preempted), Some(room), Some(distance)) =
            (self.preempted, self.room_joined, self.distance)
        else {
            let why = match self.preempted {
                None => "no unprompted post",
                Some(_) => "no question left unanswered",
            };
            return format!("{level}: {why}, nothing to compare");
        };
        let pct = |share: f64| format!("{:.1}%", 100.0 * share);
        let wait = match self.beyond {
            None => format!(
                "a wait alone at {} preempted joins {}",
                pct(preempted),
                pct(room)
            ),
            Some(end) => format!(
                "no wait alone is preempted so {}, the nearest ({} min, {} preempted) joins {}",
                if preempted < end.preempted_rate {
                    "little"
                } else {
                    "often"
                },
                end.wait_minutes,
                pct(end.preempted_rate),
                pct(room)
            ),
        };
        // Rounded first, so that a distance under a twentieth of a point
        // reads "as many", not "0.0 points more".
        let points = (1000.0 * distance).round() / 10.0;
        let than = if points > 0.0 {
            format!("{points:.1} points more")
        } else if points < 0.0 {
            format!("{:.1} points less", -points)
        } else {
            "as many".to_owned()
        };
        format!(
            "{level}: joined {}, preempted {}; {wait}: {than}",
            pct(self.joined),
            pct(preempted)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::figures::fixtures::said;

    /// A point of a curve of ten questions.
    fn point(wait_minutes: i64, join_rate: f64, preempted_rate: f64) -> RoomPoint {
        RoomPoint {
            wait_minutes,
            questions: 10,
            join_rate,
            preempted_rate,
            channels: BTreeMap::new(),
        }
    }

    /// The Slack export's curve, as docs/deciding.md gives it.
    fn slack() -> Vec<RoomPoint> {
        vec![
            point(10, 1.0, 0.301),
            point(15, 0.916, 0.259),
            point(20, 0.838, 0.211),
            point(25, 0.780, 0.175),
            point(29, 0.748, 0.169),
        ]
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn the_room_curve_posts_on_every_question_left_after_each_wait() {
        let people = [
            // Left for good: joined at every wait, never preempted.
            said("UA", 0, "how do I mount a usb stick?", None),
            // Answered after 17 minutes: joined and preempted at 10 and 15,
            // answered before the bot at 20 and after.
            said("UB", 5000, "why does grub not see windows?", None),
            said("UC", 6020, "run update-grub", Some(5000)),
        ];
        let curve = room_curve(&people);
        let at = |m: i64| curve.iter().find(|p| p.wait_minutes == m).expect("wait");
        assert_eq!(curve.len(), ROOM_WAITS.len());
        assert_eq!((at(10).join_rate, at(10).preempted_rate), (1.0, 0.5));
        assert_eq!((at(15).join_rate, at(15).preempted_rate), (1.0, 0.5));
        assert_eq!((at(20).join_rate, at(20).preempted_rate), (0.5, 0.0));
        assert_eq!((at(29).join_rate, at(29).preempted_rate), (0.5, 0.0));
        // Over another channel alone: nothing left.
        let other = [ChannelId::parse("C2").expect("id")];
        assert_eq!(at(10).over(&other).questions, 0);
        assert_eq!(at(10).over(&[ChannelId::parse("C1").expect("id")]), *at(10));
    }

    #[test]
    fn a_question_put_to_someone_by_an_at_mention_is_not_the_rooms() {
        let people = [said("UA", 0, "<@UB> can you review my patch?", None)];
        assert!(room_curve(&people).iter().all(|p| p.questions == 0));
    }

    #[test]
    fn between_two_waits_the_room_joins_on_the_line_between_them() {
        // Halfway from 20 min (21.1 %) to 15 min (25.9 %).
        assert!(close(room_joined_at(&slack(), 0.235), 0.877));
        // Unsorted, the same.
        let mut shuffled = slack();
        shuffled.reverse();
        shuffled.swap(0, 2);
        assert!(close(room_joined_at(&shuffled, 0.235), 0.877));
    }

    #[test]
    fn at_a_wait_the_room_joins_what_that_wait_joins() {
        for p in slack() {
            assert!(close(
                room_joined_at(&slack(), p.preempted_rate),
                p.join_rate
            ));
        }
    }

    #[test]
    fn beyond_the_curve_the_nearest_end_stands_in() {
        // Preempted less than any wait: the latest's.
        assert!(close(room_joined_at(&slack(), 0.10), 0.748));
        assert!(close(room_joined_at(&slack(), 0.0), 0.748));
        // More than any: the earliest's.
        assert!(close(room_joined_at(&slack(), 0.5), 1.0));
    }

    #[test]
    fn waits_preempted_alike_count_as_the_one_that_joins_most() {
        // The IRC export's curve: 20, 25 and 29 min all at 0 %, and a
        // made-up dip at 25.
        let curve = vec![
            point(10, 1.0, 0.033),
            point(15, 0.983, 0.017),
            point(20, 0.967, 0.0),
            point(25, 0.9, 0.0),
            point(29, 0.967, 0.0),
        ];
        assert!(close(room_joined_at(&curve, 0.0), 0.967));
        assert!(close(room_joined_at(&curve, 0.0085), 0.975));
        let line: Vec<i64> = line(&curve).iter().map(|p| p.wait_minutes).collect();
        assert_eq!(line, [29, 15, 10]);
    }

    #[test]
    fn no_curve_without_a_question_left() {
        assert_eq!(room_joined_at(&[], 0.2), None);
        let none: Vec<RoomPoint> = slack()
            .into_iter()
            .map(|p| RoomPoint { questions: 0, ..p })
            .collect();
        assert_eq!(room_joined_at(&none, 0.2), None);
    }

    /// Figures of 100 questions and 50 unprompted posts.
    fn level(joined: usize, preempted: usize) -> Figures {
        Figures {
            questions: 100,
            joined,
            unprompted: 50,
            preempted,
            ..Figures::default()
        }
    }

    #[test]
    fn a_level_reads_its_distance_from_the_curve() {
        let curve = slack();
        let b = beside(&level(62, 10), &curve);
        assert_eq!((b.joined, b.preempted), (0.62, Some(0.2)));
        assert!(b.beyond.is_none());
        let room = b.room_joined.expect("a curve");
        assert!(close(b.distance, room - 0.62));
        assert_eq!(
            b.describe("normal"),
            format!(
                "normal: joined 62.0%, preempted 20.0%; a wait alone at 20.0% preempted \
                 joins {:.1}%: {:.1} points more",
                100.0 * room,
                100.0 * (room - 0.62)
            )
        );
        // Preempted less than any wait: the latest stands in.
        let b = beside(&level(47, 5), &curve);
        assert_eq!(b.beyond.map(|p| p.wait_minutes), Some(29));
        assert_eq!(
            b.describe("quiet"),
            "quiet: joined 47.0%, preempted 10.0%; no wait alone is preempted so little, the \
             nearest (29 min, 16.9% preempted) joins 74.8%: 27.8 points more"
        );
        let b = beside(&level(100, 25), &curve);
        assert!(b.describe("chatty").ends_with(
            "no wait alone is preempted so often, the nearest (10 min, 30.1% preempted) \
             joins 100.0%: as many"
        ));
    }

    #[test]
    fn a_level_with_no_unprompted_post_or_no_curve_has_nothing_to_compare() {
        let silent = Figures {
            questions: 100,
            ..Figures::default()
        };
        let curve = slack();
        let b = beside(&silent, &curve);
        assert_eq!((b.preempted, b.room_joined, b.distance), (None, None, None));
        assert_eq!(
            b.describe("quiet"),
            "quiet: no unprompted post, nothing to compare"
        );
        assert_eq!(
            beside(&level(0, 5), &[]).describe("quiet"),
            "quiet: no question left unanswered, nothing to compare"
        );
        let json = serde_json::to_value(b).expect("json");
        assert_eq!(
            json,
            serde_json::json!({"joined": 0.0, "preempted": null, "room_joined": null, "distance": null})
        );
    }
}
