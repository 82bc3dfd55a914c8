//! The bot's names: a name that is also a common word (`max`) is read
//! strictly, so most uses of it go to the judge rather than being answered
//! at once. A warning, not a failure: the stack works.

use myao_domain::Settings;

use super::check::{Check, Verdict};
use crate::settings::CommonNames;

/// A warning when one of the bot's names is a common word, with what
/// `name_aliases` does about it; `None` when none is (no line at all).
pub fn names(settings: &Settings) -> Option<Check> {
    let common = CommonNames::of(settings)?;
    Some(Check {
        name: "names".to_owned(),
        verdict: Verdict::Warned {
            problem: common.problem(),
            hint: common.advice(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_common_name_is_a_warning_that_passes_and_says_what_aliases_do() {
        assert_eq!(names(&Settings::default()), None);
        let max = Settings {
            persona_name: "max".into(),
            ..Settings::default()
        };
        let check = names(&max).unwrap();
        assert!(check.passed());
        let Verdict::Warned { problem, hint } = &check.verdict else {
            panic!("{check}");
        };
        assert!(
            problem.contains("max (persona_name) is also a common word"),
            "{problem}"
        );
        assert!(hint.contains("name_aliases maxbot"), "{hint}");
        assert!(
            check
                .to_string()
                .starts_with("warn  names: max (persona_name)"),
            "{check}"
        );
    }
}
