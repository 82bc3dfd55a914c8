//! Grounds: what the judge knew when it decided the bot would speak, kept
//! against the post it became, so that a hint on that post can be read with
//! its reasons (`myao feedback`).
//!
//! Grounds hold no word of the conversation: the outcome's name, the score
//! and the names of its signals, the thresholds, the level and the tuning.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::labels::LABEL_DAYS;
use crate::rules::{Chattiness, Score, Signal, Thresholds};
use crate::{ChannelId, Ts};

/// Why the bot spoke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grounds {
    /// What decided it.
    pub outcome: Spoke,
    /// The channel's set level.
    pub level: Chattiness,
    /// The rule stage's score, when one was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i32>,
    /// The thresholds the score was held to, after the tuning: `[low, high]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<[i32; 2]>,
    /// The signals behind the score, with their points then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Scored>,
    /// The hints' offset on the thresholds then, in score points.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tuning: i32,
    /// The LLM's confidence in percent, when it decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<u8>,
}

/// What decided a post: the judgment's outcome (by the names of
/// `JudgmentOutcome::name`), a call, or a topic the bot opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Spoke {
    /// The rule stage was sure: an answer.
    RuleYes,
    /// The rule stage was sure: a reaction.
    RuleReact,
    /// The LLM decided, in the ambiguous band.
    LlmYes,
    /// It was called.
    Mention,
    /// A topic it opened in a quiet channel.
    Opening,
}

impl Spoke {
    /// Its name, as stored.
    pub fn name(self) -> &'static str {
        match self {
            Spoke::RuleYes => "rule_yes",
            Spoke::RuleReact => "rule_react",
            Spoke::LlmYes => "llm_yes",
            Spoke::Mention => "mention",
            Spoke::Opening => "opening",
        }
    }
}

/// One signal behind a score and its points then, stored as
/// `name(+points)`. A name this version no longer scores (a retired
/// signal, in an older post's grounds) is read and kept as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Scored {
    /// A signal of this version.
    Signal { signal: Signal, points: i32 },
    /// A signal of an earlier version, by its name.
    Retired { name: String, points: i32 },
}

impl Scored {
    /// `signal` with its points.
    pub fn of(signal: Signal) -> Scored {
        Scored::Signal {
            signal,
            points: signal.points(),
        }
    }
}

impl std::fmt::Display for Scored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scored::Signal { signal, points } => write!(f, "{}({points:+})", signal.name()),
            Scored::Retired { name, points } => write!(f, "{name}({points:+})"),
        }
    }
}

impl From<Scored> for String {
    fn from(scored: Scored) -> String {
        scored.to_string()
    }
}

impl TryFrom<String> for Scored {
    type Error = String;

    fn try_from(written: String) -> Result<Scored, String> {
        let bad = || format!("a signal is written name(+points), not {written:?}");
        let (name, rest) = written.split_once('(').ok_or_else(bad)?;
        let points = rest
            .strip_suffix(')')
            .and_then(|p| p.parse::<i32>().ok())
            .ok_or_else(bad)?;
        if name.is_empty() {
            return Err(bad());
        }
        Ok(match Signal::named(name) {
            Some(signal) => Scored::Signal { signal, points },
            None => Scored::Retired {
                name: name.to_owned(),
                points,
            },
        })
    }
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

impl Grounds {
    /// The grounds of a judgment's decision: its outcome, the score it held
    /// to `thresholds`, the level and the tuning's offset.
    pub fn judged(
        outcome: Spoke,
        level: Chattiness,
        score: &Score,
        thresholds: Thresholds,
        tuning: i32,
    ) -> Grounds {
        Grounds {
            outcome,
            level,
            score: Some(score.total),
            thresholds: Some([thresholds.low, thresholds.high]),
            signals: score.signals.iter().map(|s| Scored::of(*s)).collect(),
            tuning,
            confidence: None,
        }
    }

    /// With the LLM's confidence (0.0 to 1.0), in whole percent.
    pub fn with_confidence(mut self, confidence: f64) -> Grounds {
        // Clamped to 0..=100 first, so the cast cannot truncate.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let percent = (confidence.clamp(0.0, 1.0) * 100.0).round() as u8;
        self.confidence = Some(percent);
        self
    }

    /// The grounds of a post no judgment decided: a mention's answer, or a
    /// topic it opened.
    pub fn unjudged(outcome: Spoke, level: Chattiness) -> Grounds {
        Grounds {
            outcome,
            level,
            score: None,
            thresholds: None,
            signals: Vec::new(),
            tuning: 0,
            confidence: None,
        }
    }

    /// Whether the bot spoke unprompted (not called).
    pub fn unprompted(&self) -> bool {
        self.outcome != Spoke::Mention
    }

    /// The grounds in one line: `rule_yes score=45 [20..40) normal
    /// question(+25) ...`, with `tuned=+7` and `confidence=80%` when there
    /// are.
    pub fn explain(&self) -> String {
        let mut parts = vec![self.outcome.name().to_owned()];
        if let Some(score) = self.score {
            parts.push(format!("score={score}"));
        }
        if let Some([low, high]) = self.thresholds {
            parts.push(format!("[{low}..{high})"));
        }
        parts.push(self.level.name().to_owned());
        if self.tuning != 0 {
            parts.push(format!("tuned={:+}", self.tuning));
        }
        if let Some(percent) = self.confidence {
            parts.push(format!("confidence={percent}%"));
        }
        parts.extend(self.signals.iter().map(Scored::to_string));
        parts.join(" ")
    }
}

/// The grounds of one of the bot's posts, kept six weeks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostGrounds {
    pub channel: ChannelId,
    /// The bot's post.
    pub post: Ts,
    /// Its conversation's thread, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_ts: Option<Ts>,
    pub grounds: Grounds,
    /// When it was posted.
    pub at: DateTime<Utc>,
}

impl PostGrounds {
    /// When it expires: twice a label's days, so that a hint given in the
    /// three weeks after the post is read with it as long as it is kept.
    pub fn expires_at(&self) -> DateTime<Utc> {
        self.at + Duration::days(2 * LABEL_DAYS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_grounds_are_read_back_typed_old_items_included() {
        // As a version before typed grounds wrote them, with a signal it
        // no longer scores: read, and written again byte for byte.
        let old = r#"{"outcome":"rule_yes","level":"quiet","score":70,"thresholds":[35,60],"signals":["asked_someone_else(-30)","unanswered_question(+60)"]}"#;
        let grounds: Grounds = serde_json::from_str(old).unwrap();
        assert_eq!(grounds.outcome, Spoke::RuleYes);
        assert_eq!(grounds.level, Chattiness::Quiet);
        assert_eq!(
            grounds.signals,
            [
                Scored::Retired {
                    name: "asked_someone_else".into(),
                    points: -30
                },
                Scored::of(Signal::UnansweredQuestion),
            ]
        );
        assert_eq!(serde_json::to_string(&grounds).unwrap(), old);
        // Anything else is no grounds.
        for bad in [
            r#"{"outcome":"shrug","level":"quiet"}"#,
            r#"{"outcome":"mention","level":"loud"}"#,
            r#"{"outcome":"mention","level":"quiet","signals":["burst"]}"#,
            r#"{"outcome":"mention","level":"quiet","signals":["(+5)"]}"#,
            r#"{"outcome":"mention","level":"quiet","signals":["burst(x)"]}"#,
        ] {
            assert!(serde_json::from_str::<Grounds>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_signal_is_listed_once_and_found_by_its_name() {
        for signal in Signal::ALL {
            assert_eq!(Signal::named(signal.name()), Some(signal));
        }
        let names: std::collections::BTreeSet<&str> =
            Signal::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(names.len(), Signal::ALL.len());
        // A new signal fails to compile here until it is listed, then
        // this test until it is in `ALL`.
        let listed = |s: Signal| match s {
            Signal::UnansweredQuestion
            | Signal::AfterSilence
            | Signal::Interest
            | Signal::TwoPeople
            | Signal::Burst
            | Signal::BotRecent
            | Signal::NotLeftYet
            | Signal::TheirExchange => s,
        };
        assert_eq!(Signal::ALL.map(listed).len(), 8);
    }

    #[test]
    fn grounds_are_the_judges_figures_in_one_line_and_round_trip() {
        let score = Score {
            total: 45,
            signals: vec![Signal::UnansweredQuestion],
            answers: None,
            again: None,
            wait: None,
        };
        let thresholds = Thresholds { low: 27, high: 47 };
        let grounds = Grounds::judged(Spoke::LlmYes, Chattiness::Normal, &score, thresholds, 7)
            .with_confidence(0.834);
        assert_eq!(grounds.confidence, Some(83));
        let line = grounds.explain();
        assert!(
            line.starts_with(
                "llm_yes score=45 [27..47) normal tuned=+7 confidence=83% unanswered_question("
            ),
            "{line}"
        );
        assert!(grounds.unprompted());
        let json = serde_json::to_string(&grounds).unwrap();
        assert_eq!(serde_json::from_str::<Grounds>(&json).unwrap(), grounds);

        let mention = Grounds::unjudged(Spoke::Mention, Chattiness::Quiet);
        assert!(!mention.unprompted());
        assert_eq!(mention.explain(), "mention quiet");
        assert_eq!(
            serde_json::to_string(&mention).unwrap(),
            r#"{"outcome":"mention","level":"quiet"}"#
        );
        assert_eq!(
            Grounds::unjudged(Spoke::Opening, Chattiness::Chatty)
                .with_confidence(7.0)
                .confidence,
            Some(100)
        );
    }
}
