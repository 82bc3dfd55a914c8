//! The judgment's verdict, and how it is read out of an LLM's answer.

use serde_json::Value;

use super::reply::{EmojiName, Reply};

/// The longest delay a judgment may ask for; longer ones are cut to it.
pub const MAX_DELAY_SECONDS: u32 = 3_600;

/// Whether and when to speak (designs 06 and extra05b).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgmentResult {
    pub should_respond: bool,
    /// Why, for the logs.
    pub reason: String,
    /// 0.0 to 1.0.
    pub confidence: f64,
    /// Seconds to wait before replying; `None` means at once.
    pub delay_seconds: Option<u32>,
    /// The form of the answer: `None` exactly when `should_respond` is false.
    pub response_type: ResponseType,
    /// For a reaction, the emoji the judgment chose, if it named a valid one.
    pub emoji: Option<EmojiName>,
}

/// The form of answer a judgment asks for (its `response_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseType {
    None,
    Reaction,
    Short,
    Full,
}

impl ResponseType {
    /// `none`, `reaction`, `short` or `full`, as the judgment writes it.
    pub fn name(self) -> &'static str {
        match self {
            ResponseType::None => "none",
            ResponseType::Reaction => "reaction",
            ResponseType::Short => "short",
            ResponseType::Full => "full",
        }
    }

    /// Reads a `response_type` (a few synonyms too); `None` for a word it
    /// does not know.
    fn read(word: &str) -> Option<ResponseType> {
        Some(match word.trim().to_lowercase().as_str() {
            "none" | "silent" | "silence" | "no" => ResponseType::None,
            "reaction" | "react" | "emoji" => ResponseType::Reaction,
            "short" | "brief" | "acknowledgement" | "ack" => ResponseType::Short,
            "full" | "reply" | "long" => ResponseType::Full,
            _ => return None,
        })
    }
}

/// Why an LLM's answer could not be read as a judgment. The caller stays
/// silent and logs this.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JudgmentParseError {
    #[error("no JSON object in the answer")]
    NoJson,
    #[error("the JSON object does not parse: {0}")]
    BadJson(String),
    #[error("should_respond is missing or not a boolean")]
    NoVerdict,
    #[error("{0} has the wrong type")]
    WrongType(&'static str),
}

/// Finds the first balanced `{...}` in `text`, ignoring braces inside strings.
pub(crate) fn first_object(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..start + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

impl JudgmentResult {
    /// Reads a judgment from an LLM answer: the JSON object may be wrapped in
    /// a code fence or surrounded by prose. `should_respond` must be a real
    /// boolean (anything else is not a verdict, and guessing one would make
    /// the bot speak when it should not); a confidence out of 0..=1 is
    /// clamped; a negative delay means at once, a huge one is capped at
    /// [`MAX_DELAY_SECONDS`].
    pub fn parse(answer: &str) -> Result<JudgmentResult, JudgmentParseError> {
        let object = first_object(answer).ok_or(JudgmentParseError::NoJson)?;
        let value: Value =
            serde_json::from_str(object).map_err(|e| JudgmentParseError::BadJson(e.to_string()))?;
        // `None`: absent (an old-style verdict); `Some(None)`: a word no
        // type is known by.
        let response_type = match value.get("response_type") {
            None | Some(Value::Null) => None,
            Some(Value::String(word)) => Some(ResponseType::read(word)),
            Some(_) => Some(None),
        };
        let should_respond = match (value.get("should_respond"), response_type) {
            (Some(Value::Bool(b)), _) => *b,
            // A known type is a verdict of its own.
            (None | Some(Value::Null), Some(Some(t))) => t != ResponseType::None,
            _ => return Err(JudgmentParseError::NoVerdict),
        };
        // The closest safe choice: silence beats any answer the verdict
        // did not ask for, and an unknown type of answer is a short one.
        let response_type = match (should_respond, response_type) {
            (false, _) | (true, Some(Some(ResponseType::None))) => ResponseType::None,
            (true, None) => ResponseType::Full,
            (true, Some(None)) => ResponseType::Short,
            (true, Some(Some(t))) => t,
        };
        let should_respond = response_type != ResponseType::None;
        // An emoji that is not a name is no choice: the default stands in.
        let emoji = value
            .get("emoji")
            .and_then(Value::as_str)
            .and_then(|e| EmojiName::parse(e).ok())
            .filter(|_| response_type == ResponseType::Reaction);
        let reason = match value.get("reason") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(JudgmentParseError::WrongType("reason")),
        };
        let confidence = match value.get("confidence") {
            None | Some(Value::Null) => 1.0,
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite())
                .ok_or(JudgmentParseError::WrongType("confidence"))?
                .clamp(0.0, 1.0),
        };
        let delay_seconds = match value.get("delay_seconds") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let x = v
                    .as_f64()
                    .filter(|x| x.is_finite())
                    .ok_or(JudgmentParseError::WrongType("delay_seconds"))?;
                // Clamped first, so the cast cannot overflow.
                Some(x.round().clamp(0.0, f64::from(MAX_DELAY_SECONDS)) as u32)
            }
        };
        Ok(JudgmentResult {
            should_respond,
            reason,
            confidence,
            delay_seconds,
            response_type,
            emoji,
        })
    }

    /// The answer the verdict asks for: `None` for silence; a reaction
    /// without a valid emoji of its own uses `default_emoji`.
    pub fn reply(&self, default_emoji: &EmojiName) -> Option<Reply> {
        match self.response_type {
            ResponseType::None => None,
            ResponseType::Full => Some(Reply::Full),
            ResponseType::Short => Some(Reply::Short),
            ResponseType::Reaction => Some(Reply::Reaction {
                emoji: self.emoji.clone().unwrap_or_else(|| default_emoji.clone()),
            }),
        }
    }

    /// The delay before replying: `None` means at once.
    pub fn delay(&self) -> u32 {
        self.delay_seconds.unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_json() {
        let j = JudgmentResult::parse(
            r#"{"should_respond": true, "reason": "質問に誰も答えていない", "confidence": 0.8, "delay_seconds": 30}"#,
        )
        .unwrap();
        assert!(j.should_respond);
        assert_eq!(j.reason, "質問に誰も答えていない");
        assert_eq!(j.confidence, 0.8);
        assert_eq!(j.delay_seconds, Some(30));
    }

    #[test]
    fn code_fence_and_prose_around_the_json() {
        let answer = "Sure! Here is my judgment:\n```json\n{\"should_respond\": false, \"reason\": \"終わった会話 {笑}\"}\n```\nHope this helps.";
        let j = JudgmentResult::parse(answer).unwrap();
        assert!(!j.should_respond);
        assert_eq!(j.reason, "終わった会話 {笑}");
        assert_eq!(j.confidence, 1.0);
        assert_eq!(j.delay_seconds, None);
    }

    #[test]
    fn confidence_out_of_range_is_clamped() {
        let hi = JudgmentResult::parse(r#"{"should_respond": true, "confidence": 7}"#).unwrap();
        let lo = JudgmentResult::parse(r#"{"should_respond": true, "confidence": -0.5}"#).unwrap();
        assert_eq!((hi.confidence, lo.confidence), (1.0, 0.0));
    }

    #[test]
    fn delays_are_bounded() {
        let neg =
            JudgmentResult::parse(r#"{"should_respond": true, "delay_seconds": -5}"#).unwrap();
        let big =
            JudgmentResult::parse(r#"{"should_respond": true, "delay_seconds": 1e12}"#).unwrap();
        let frac =
            JudgmentResult::parse(r#"{"should_respond": true, "delay_seconds": 29.6}"#).unwrap();
        assert_eq!(neg.delay_seconds, Some(0));
        assert_eq!(big.delay_seconds, Some(MAX_DELAY_SECONDS));
        assert_eq!(frac.delay_seconds, Some(30));
    }

    fn plus_one() -> EmojiName {
        EmojiName::parse("+1").unwrap()
    }

    #[test]
    fn an_old_style_verdict_is_a_full_reply_or_silence() {
        let yes = JudgmentResult::parse(r#"{"should_respond": true}"#).unwrap();
        let no = JudgmentResult::parse(r#"{"should_respond": false}"#).unwrap();
        assert_eq!(yes.response_type, ResponseType::Full);
        assert_eq!(yes.reply(&plus_one()), Some(Reply::Full));
        assert_eq!(no.response_type, ResponseType::None);
        assert_eq!(no.reply(&plus_one()), None);
    }

    #[test]
    fn the_judgment_chooses_the_form() {
        let reaction = JudgmentResult::parse(
            r#"{"should_respond": true, "response_type": "reaction", "emoji": ":tada:"}"#,
        )
        .unwrap();
        assert_eq!(
            reaction.reply(&plus_one()),
            Some(Reply::Reaction {
                emoji: EmojiName::parse("tada").unwrap()
            })
        );
        let short =
            JudgmentResult::parse(r#"{"should_respond": true, "response_type": "Short"}"#).unwrap();
        assert_eq!(short.reply(&plus_one()), Some(Reply::Short));
        // A type alone is a verdict.
        let full = JudgmentResult::parse(r#"{"response_type": "full"}"#).unwrap();
        assert!(full.should_respond);
        let none = JudgmentResult::parse(r#"{"response_type": "none"}"#).unwrap();
        assert!(!none.should_respond);
    }

    #[test]
    fn doubtful_forms_take_the_closest_safe_choice() {
        let parse = |s: &str| JudgmentResult::parse(s).unwrap();
        // A bad emoji: the default.
        let bad = parse(
            r#"{"should_respond": true, "response_type": "reaction", "emoji": "party popper!"}"#,
        );
        assert_eq!(bad.emoji, None);
        assert_eq!(
            bad.reply(&plus_one()),
            Some(Reply::Reaction { emoji: plus_one() })
        );
        // An unknown type, or one of the wrong JSON type: a short answer.
        for answer in [
            r#"{"should_respond": true, "response_type": "sticker"}"#,
            r#"{"should_respond": true, "response_type": 3}"#,
        ] {
            assert_eq!(parse(answer).response_type, ResponseType::Short, "{answer}");
        }
        // A verdict and a type that disagree: silence.
        let no = parse(r#"{"should_respond": false, "response_type": "full"}"#);
        let none = parse(r#"{"should_respond": true, "response_type": "none"}"#);
        assert!(!no.should_respond && !none.should_respond);
        // An unknown type and no verdict: no verdict at all.
        assert_eq!(
            JudgmentResult::parse(r#"{"response_type": "sticker"}"#),
            Err(JudgmentParseError::NoVerdict)
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_guess() {
        assert_eq!(
            JudgmentResult::parse("I think yes"),
            Err(JudgmentParseError::NoJson)
        );
        assert!(matches!(
            JudgmentResult::parse("{should_respond: yes}"),
            Err(JudgmentParseError::BadJson(_))
        ));
        assert_eq!(
            JudgmentResult::parse(r#"{"reason": "x"}"#),
            Err(JudgmentParseError::NoVerdict)
        );
        assert_eq!(
            JudgmentResult::parse(r#"{"should_respond": "true"}"#),
            Err(JudgmentParseError::NoVerdict)
        );
        assert_eq!(
            JudgmentResult::parse(r#"{"should_respond": true, "confidence": "high"}"#),
            Err(JudgmentParseError::WrongType("confidence"))
        );
        assert_eq!(
            JudgmentResult::parse("{\"should_respond\": true"),
            Err(JudgmentParseError::NoJson)
        );
        assert_eq!(JudgmentResult::parse(""), Err(JudgmentParseError::NoJson));
    }
}
