//! The judgment's verdict, and how it is read out of an LLM's answer.

use serde_json::Value;

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
fn first_object(text: &str) -> Option<&str> {
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
        let should_respond = value
            .get("should_respond")
            .and_then(Value::as_bool)
            .ok_or(JudgmentParseError::NoVerdict)?;
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
        })
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
