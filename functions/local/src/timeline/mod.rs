//! What a replay reports: a timeline of events and a closing summary,
//! written as readable text ([`TextSink`]) or as one JSON object per line
//! ([`JsonSink`]).

mod event;
mod json;
mod sink;
mod summary;
mod text;

pub use event::{
    proactive_name, DueReply, Event, EventKind, Header, HintGiven, MemoryNote, Prompt, Verdict,
    DRY_RUN,
};
pub use json::{event_json, summary_json, JsonSink};
pub use sink::{Recorder, Sink};
pub use summary::{Isolation, Summary};
pub use text::{span, thousands, TextSink};

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};
    use myao_domain::judgment::ResponseType;
    use myao_domain::proactive::Hold;
    use myao_domain::rules::{self, Decision, Score, Thresholds};
    use myao_domain::{
        Channel, ChannelId, Job, JudgmentJob, JudgmentResult, ProactiveJob, Ts, Visibility,
    };
    use myao_services::jobs::JobOutcome;
    use myao_services::judgment::{JudgmentOutcome, Ruling};
    use myao_services::proactive::ProactiveOutcome;
    use std::collections::BTreeMap;

    fn ruling(decision: Decision) -> Ruling {
        Ruling {
            score: Score {
                total: 30,
                signals: vec![],
                answers: None,
                again: None,
                wait: None,
            },
            thresholds: Thresholds { low: 20, high: 40 },
            decision,
            tuned: 0,
        }
    }

    fn result(should_respond: bool) -> JudgmentResult {
        JudgmentResult {
            should_respond,
            reason: "a reason".into(),
            confidence: 0.5,
            delay_seconds: None,
            response_type: if should_respond {
                ResponseType::Full
            } else {
                ResponseType::None
            },
            emoji: None,
        }
    }

    fn at() -> DateTime<Utc> {
        Ts::parse("1767600000.000100").unwrap().to_datetime()
    }

    /// Every judgment outcome the app has, each gate's and each sure
    /// decision's.
    fn every_judgment() -> Vec<JudgmentOutcome> {
        let at = at();
        let mut all = vec![
            JudgmentOutcome::Stale,
            JudgmentOutcome::Empty,
            JudgmentOutcome::Quiet(ruling(Decision::Silent)),
            JudgmentOutcome::Capped(ruling(Decision::Respond)),
            JudgmentOutcome::Silent {
                ruling: ruling(Decision::Ask),
                why: myao_services::judgment::Unusable::NotAVerdict {
                    error: myao_domain::judgment::JudgmentParseError::NoJson,
                    answer: "meow".into(),
                },
            },
            JudgmentOutcome::Declined(ruling(Decision::Ask), result(false)),
            JudgmentOutcome::Respond {
                ruling: ruling(Decision::Ask),
                result: result(true),
                at,
            },
            JudgmentOutcome::Sure {
                ruling: ruling(Decision::Respond),
                at,
            },
            JudgmentOutcome::Sure {
                ruling: ruling(Decision::React),
                at,
            },
        ];
        all.extend(
            rules::GATES
                .iter()
                .map(|(gate, _)| JudgmentOutcome::Held(*gate)),
        );
        // A new outcome fails to compile here until it is listed above.
        for outcome in &all {
            match outcome {
                JudgmentOutcome::Stale
                | JudgmentOutcome::Empty
                | JudgmentOutcome::Held(_)
                | JudgmentOutcome::Quiet(_)
                | JudgmentOutcome::Capped(_)
                | JudgmentOutcome::Silent { .. }
                | JudgmentOutcome::Declined(..)
                | JudgmentOutcome::Respond { .. }
                | JudgmentOutcome::Sure { .. } => {}
            }
        }
        all
    }

    /// Every proactive outcome the app has, each hold's.
    fn every_proactive() -> Vec<ProactiveOutcome> {
        let holds = [
            Hold::Off,
            Hold::NotAllowed,
            Hold::MentionsOnly,
            Hold::OutsideHours,
            Hold::Muted,
            Hold::Empty,
            Hold::NotSilent,
            Hold::BotSpokeLast,
            Hold::Cooldown,
            Hold::WeekFull,
            Hold::HourFull,
        ];
        let mut all = vec![
            ProactiveOutcome::Stale,
            ProactiveOutcome::AlreadyDone,
            ProactiveOutcome::Silent(myao_services::proactive::Unusable::NotAVerdict(
                myao_domain::proactive::OpeningParseError::NoJson,
            )),
            ProactiveOutcome::Declined,
            ProactiveOutcome::Open {
                topic: "cats".into(),
                at: at(),
            },
        ];
        all.extend(holds.into_iter().map(ProactiveOutcome::Held));
        // A new outcome or hold fails to compile here until it is listed above.
        for outcome in &all {
            match outcome {
                ProactiveOutcome::Held(
                    Hold::Off
                    | Hold::NotAllowed
                    | Hold::MentionsOnly
                    | Hold::OutsideHours
                    | Hold::Muted
                    | Hold::Empty
                    | Hold::NotSilent
                    | Hold::BotSpokeLast
                    | Hold::Cooldown
                    | Hold::WeekFull
                    | Hold::HourFull,
                )
                | ProactiveOutcome::Stale
                | ProactiveOutcome::AlreadyDone
                | ProactiveOutcome::Silent(_)
                | ProactiveOutcome::Declined
                | ProactiveOutcome::Open { .. } => {}
            }
        }
        all
    }

    fn event(kind: EventKind) -> Event {
        Event {
            at: at(),
            channel: Some(Channel {
                id: ChannelId::parse("C1").unwrap(),
                name: "general".into(),
                visibility: Visibility::PUBLIC,
            }),
            thread_ts: None,
            kind,
        }
    }

    /// The line the text sink writes for `event`.
    fn line(event: &Event) -> String {
        let mut out = Vec::new();
        TextSink::new(&mut out).event(event).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The value of the metric `job` counts `outcome` under, by `Outcome`.
    fn metric(outcome: JobOutcome, job: &Job) -> String {
        match outcome.metric(job).and_then(|d| d.dimension) {
            Some(("Outcome", value)) => value,
            other => panic!("no Outcome: {other:?}"),
        }
    }

    #[test]
    fn the_timeline_names_a_judgment_as_its_metric_does() {
        let job = Job::Judgment(JudgmentJob {
            channel: ChannelId::parse("C1").unwrap(),
            thread_ts: None,
            newest_ts: Ts::parse("1767600000.000100").unwrap(),
        });
        let mut names = BTreeMap::new();
        for outcome in every_judgment() {
            let counted = metric(JobOutcome::Judgment(outcome.clone()), &job);
            for dry_run in [false, true] {
                let verdict = Verdict {
                    outcome: outcome.clone(),
                    dry_run,
                    reply: None,
                };
                let name = verdict.name();
                if dry_run && matches!(outcome, JudgmentOutcome::Silent { .. }) {
                    // No LLM: the replay's own name, no metric's.
                    assert_eq!(name, DRY_RUN);
                } else {
                    assert_eq!(name, counted, "{outcome:?}");
                }
                let e = event(EventKind::Judgment {
                    verdict,
                    prompts: vec![],
                });
                assert_eq!(event_json(&e)["outcome"], name, "{outcome:?}");
                let shown = line(&e);
                assert!(
                    shown.contains(&format!("judgment (top level): {name}, "))
                        || shown.contains(&format!("judgment (top level): {name}: ")),
                    "{shown}"
                );
                names.insert(name, ());
            }
        }
        assert_eq!(
            names.into_keys().collect::<Vec<_>>(),
            [
                "dry run",
                "empty",
                "held",
                "limited",
                "llm_no",
                "llm_yes",
                "rule_react",
                "rule_silent",
                "rule_yes",
                "stale",
                "too_old",
                "unusable"
            ]
        );
    }

    #[test]
    fn the_timeline_names_a_proactive_judgment_as_its_metric_does() {
        let job = Job::Proactive(ProactiveJob {
            channel: ChannelId::parse("C1").unwrap(),
            made_at: Ts::parse("1767600000.000100").unwrap(),
        });
        for outcome in every_proactive() {
            let counted = metric(JobOutcome::Proactive(outcome.clone()), &job);
            for dry_run in [false, true] {
                let name = proactive_name(&outcome, dry_run);
                if dry_run && matches!(outcome, ProactiveOutcome::Silent(_)) {
                    assert_eq!(name, DRY_RUN);
                } else {
                    assert_eq!(name, counted, "{outcome:?}");
                }
                let e = event(EventKind::Proactive {
                    outcome: outcome.clone(),
                    dry_run,
                    prompts: vec![],
                });
                assert_eq!(event_json(&e)["outcome"], name, "{outcome:?}");
                let shown = line(&e);
                assert!(
                    shown.contains(&format!("proactive judgment: {name}"))
                        || shown.contains(&format!("proactive judgment: held: {name}\n")),
                    "{shown}"
                );
            }
        }
    }
}
