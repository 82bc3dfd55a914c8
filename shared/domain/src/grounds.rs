//! Grounds: what the judge knew when it decided the bot would speak, kept
//! against the post it became, so that a hint on that post can be read with
//! its reasons (`myao feedback`).
//!
//! Grounds hold no word of the conversation: the outcome's name, the score
//! and the names of its signals, the thresholds, the level and the tuning.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::labels::LABEL_DAYS;
use crate::rules::{Chattiness, Score, Thresholds};
use crate::{ChannelId, Ts};

/// Why the bot spoke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grounds {
    /// The judgment's outcome (`rule_yes`, `llm_yes`, `rule_react`), or
    /// `mention` for an answer to a call and `opening` for a topic it
    /// opened.
    pub outcome: String,
    /// The channel's set level (`quiet`, `normal`, `chatty`).
    pub level: String,
    /// The rule stage's score, when one was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i32>,
    /// The thresholds the score was held to, after the tuning: `[low, high]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<[i32; 2]>,
    /// The signals behind the score, as `name(+points)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<String>,
    /// The hints' offset on the thresholds then, in score points.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tuning: i32,
    /// The LLM's confidence in percent, when it decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<u8>,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

impl Grounds {
    /// The grounds of a judgment's decision: its outcome's name, the score
    /// it held to `thresholds`, the level and the tuning's offset.
    pub fn judged(
        outcome: &str,
        level: Chattiness,
        score: &Score,
        thresholds: Thresholds,
        tuning: i32,
    ) -> Grounds {
        Grounds {
            outcome: outcome.to_owned(),
            level: level.name().to_owned(),
            score: Some(score.total),
            thresholds: Some([thresholds.low, thresholds.high]),
            signals: score
                .signals
                .iter()
                .map(|s| format!("{}({:+})", s.name(), s.points()))
                .collect(),
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

    /// The grounds of a post no judgment decided: `mention` (it was
    /// called) or `opening` (a topic it opened in a quiet channel).
    pub fn unjudged(outcome: &str, level: Chattiness) -> Grounds {
        Grounds {
            outcome: outcome.to_owned(),
            level: level.name().to_owned(),
            score: None,
            thresholds: None,
            signals: Vec::new(),
            tuning: 0,
            confidence: None,
        }
    }

    /// Whether the bot spoke unprompted (not called).
    pub fn unprompted(&self) -> bool {
        self.outcome != "mention"
    }

    /// The grounds in one line: `rule_yes score=45 [20..40) normal
    /// question(+25) ...`, with `tuned=+7` and `confidence=80%` when there
    /// are.
    pub fn explain(&self) -> String {
        let mut parts = vec![self.outcome.clone()];
        if let Some(score) = self.score {
            parts.push(format!("score={score}"));
        }
        if let Some([low, high]) = self.thresholds {
            parts.push(format!("[{low}..{high})"));
        }
        parts.push(self.level.clone());
        if self.tuning != 0 {
            parts.push(format!("tuned={:+}", self.tuning));
        }
        if let Some(percent) = self.confidence {
            parts.push(format!("confidence={percent}%"));
        }
        parts.extend(self.signals.iter().cloned());
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
    use crate::rules::Signal;

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
        let grounds = Grounds::judged("llm_yes", Chattiness::Normal, &score, thresholds, 7)
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

        let mention = Grounds::unjudged("mention", Chattiness::Quiet);
        assert!(!mention.unprompted());
        assert_eq!(mention.explain(), "mention quiet");
        assert_eq!(
            serde_json::to_string(&mention).unwrap(),
            r#"{"outcome":"mention","level":"quiet"}"#
        );
        assert_eq!(
            Grounds::unjudged("opening", Chattiness::Chatty)
                .with_confidence(7.0)
                .confidence,
            Some(100)
        );
    }
}
