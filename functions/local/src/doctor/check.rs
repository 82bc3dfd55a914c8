//! What a check found, in a module of its own: the checks of `doctor` and
//! of its submodules all build one, and the submodules should not have to
//! reach back up into the module that runs them.

use std::fmt;

/// One line of the report: what was checked, and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: String,
    pub verdict: Verdict,
}

/// What a check found: a pass, a warning, or a failure with what to do
/// about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// What was found.
    Passed(String),
    /// Works, but not as one may expect; and what would help. Counts as a
    /// pass.
    Warned { problem: String, hint: String },
    /// What is wrong, and what to do about it.
    Failed { problem: String, fix: String },
}

impl Check {
    pub(super) fn ok(name: impl Into<String>, found: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            verdict: Verdict::Passed(found.into()),
        }
    }

    pub(super) fn fail(
        name: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name: name.into(),
            verdict: Verdict::Failed {
                problem: problem.into(),
                fix: fix.into(),
            },
        }
    }

    pub fn passed(&self) -> bool {
        !matches!(self.verdict, Verdict::Failed { .. })
    }

    /// Replaces every occurrence of `secret` in what the check says.
    pub(super) fn redact(&mut self, secret: &str) {
        let scrub = |text: &mut String| {
            if text.contains(secret) {
                *text = text.replace(secret, "[redacted]");
            }
        };
        match &mut self.verdict {
            Verdict::Passed(found) => scrub(found),
            Verdict::Failed { problem, fix } | Verdict::Warned { problem, hint: fix } => {
                scrub(problem);
                scrub(fix);
            }
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Verdict::Passed(found) => write!(f, "ok    {}: {found}", self.name),
            Verdict::Failed { problem, fix } => {
                write!(f, "FAIL  {}: {problem} -- fix: {fix}", self.name)
            }
            Verdict::Warned { problem, hint } => {
                write!(f, "warn  {}: {problem} -- hint: {hint}", self.name)
            }
        }
    }
}
