//! The timeline as JSON: one object per line.

use myao_services::proactive::ProactiveOutcome;
use std::io::{self, Write};

use chrono::{DateTime, SecondsFormat, Utc};
use myao_services::judgment::{JudgmentOutcome, Ruling};
use serde_json::{json, Value};

use super::event::{proactive_name, Event, EventKind, Header, Prompt, Verdict};
use super::sink::Sink;
use super::summary::Summary;

/// One JSON object per line.
pub struct JsonSink<W: Write> {
    out: W,
}

impl<W: Write> JsonSink<W> {
    pub fn new(out: W) -> JsonSink<W> {
        JsonSink { out }
    }

    fn line(&mut self, value: &Value) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, value)?;
        self.out.write_all(b"\n")
    }
}

fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn prompts_json(prompts: &[Prompt]) -> Value {
    Value::Array(
        prompts
            .iter()
            .map(|p| {
                json!({
                    "number": p.number,
                    "role": p.role.as_str(),
                    "chars": p.chars,
                    "file": p.file.as_ref().map(|f| f.display().to_string()),
                    "text": if p.file.is_some() { None } else { Some(&p.text) },
                })
            })
            .collect(),
    )
}

/// The gate that held a judgment, by its name (`cooldown`), if one did.
fn gate(outcome: &JudgmentOutcome) -> Option<&'static str> {
    match outcome {
        JudgmentOutcome::Held(gate) => Some(gate.name()),
        _ => None,
    }
}

/// The rule stage's ruling: its decision, score, thresholds and signals
/// (names and points only: no word of the conversation).
pub fn ruling_json(r: &Ruling) -> Value {
    json!({
        "decision": r.decision.name(),
        "score": r.score.total,
        "low": r.thresholds.low,
        "high": r.thresholds.high,
        "signals": r.score.signals.iter()
            .map(|s| json!({"signal": s.name(), "points": s.points()}))
            .collect::<Vec<_>>(),
        "explain": r.explain().trim_end(),
    })
}

/// The JSON object of an event: its kind's fields, then where and when.
pub fn event_json(e: &Event) -> Value {
    let mut v = kind_json(&e.kind);
    v["time"] = json!(time(e.at));
    v["channel"] = json!(e.channel.as_ref().map(|c| c.id.as_str()));
    v["channel_name"] = json!(e.channel.as_ref().map(|c| c.name.as_str()));
    v["thread_ts"] = json!(e.thread_ts);
    v
}

/// The fields of an event's kind, its `type` first.
fn kind_json(kind: &EventKind) -> Value {
    match kind {
        EventKind::Message {
            ts,
            user,
            user_name,
            text,
            is_bot,
            ..
        } => json!({"type": "message", "ts": ts, "user": user, "user_name": user_name,
                     "text": text, "is_bot": is_bot}),
        EventKind::Edited {
            ts,
            user_name,
            text,
            known,
        } => {
            json!({"type": "edit", "ts": ts, "user_name": user_name, "text": text, "known": known})
        }
        EventKind::Deleted {
            ts,
            user_name,
            text,
        } => json!({"type": "deletion", "ts": ts, "user_name": user_name, "text": text}),
        EventKind::Skipped { reason } => json!({"type": "skipped", "reason": reason}),
        EventKind::Judgment { verdict, prompts } => judgment_json(verdict, prompts),
        EventKind::Reply {
            ts,
            text,
            mention,
            short,
            opener,
        } => {
            json!({"type": "reply", "ts": ts, "text": text, "mention": mention, "short": short,
                   "opener": opener})
        }
        EventKind::Reaction {
            on,
            user_name,
            emoji,
            mention,
        } => json!({"type": "reaction", "on": on, "user_name": user_name, "emoji": emoji,
                     "mention": mention}),
        EventKind::Hint(h) => json!({"type": "hint", "on": h.on, "user_name": h.user_name,
                                     "emoji": h.emoji, "hint": h.hint, "withdrawn": h.withdrawn}),
        EventKind::NoReply {
            mention,
            reason,
            prompts,
        } => json!({"type": "no_reply", "mention": mention, "reason": reason,
                     "prompts": prompts_json(prompts)}),
        EventKind::Memory {
            sweep,
            written,
            facts,
            llm_calls,
            prompts,
            repeat,
            proactive,
        } => json!({
            "type": "memory",
            "proactive": proactive.iter().map(|(c, at)| json!({"channel_name": c, "at": time(*at)})).collect::<Vec<_>>(),
            "job": if *sweep { "sweep" } else { "thread" },
            "repeat": repeat,
            "facts": facts,
            "written": written.iter().map(|n| json!({"scope": n.scope, "label": n.label, "kind": n.kind.as_str()})).collect::<Vec<_>>(),
            "llm_calls": llm_calls,
            "prompts": prompts_json(prompts),
        }),
        EventKind::Proactive {
            outcome,
            dry_run,
            prompts,
        } => proactive_json(outcome, *dry_run, prompts),
        EventKind::JobFailed { job, error } => {
            json!({"type": "job_failed", "job": job, "error": error})
        }
    }
}

/// A judgment: its outcome and ruling, then the reply it planned and the
/// LLM's reason, where there are.
fn judgment_json(verdict: &Verdict, prompts: &[Prompt]) -> Value {
    let mut j = json!({"type": "judgment", "outcome": verdict.name(),
                       "gate": gate(&verdict.outcome),
                       "ruling": verdict.ruling().map(ruling_json),
                       "prompts": prompts_json(prompts)});
    if let JudgmentOutcome::Respond { result, .. } = &verdict.outcome {
        j["form"] = json!(result.response_type.name());
    }
    if let Some(reply) = &verdict.reply {
        j["delay_seconds"] = json!(reply.delay_seconds);
        j["reply_at"] = json!(time(reply.at));
        j["reply_thread_ts"] = json!(reply.thread);
    }
    match &verdict.outcome {
        JudgmentOutcome::Respond { result, .. } | JudgmentOutcome::Declined(_, result) => {
            j["reason"] = json!(result.reason);
            j["confidence"] = json!(result.confidence);
        }
        JudgmentOutcome::Silent { why, .. } if !verdict.is_dry_run() => {
            j["reason"] = json!(why.to_string());
        }
        _ => {}
    }
    j
}

/// A proactive judgment: its outcome, and the topic opened or the reason
/// for silence (none in a dry run).
fn proactive_json(outcome: &ProactiveOutcome, dry_run: bool, prompts: &[Prompt]) -> Value {
    let (topic, reason) = match outcome {
        ProactiveOutcome::Open { topic, .. } => (Some(topic.clone()), None),
        ProactiveOutcome::Silent(why) if !dry_run => (None, Some(why.to_string())),
        _ => (None, None),
    };
    json!({"type": "proactive", "outcome": proactive_name(outcome, dry_run),
           "topic": topic, "reason": reason, "prompts": prompts_json(prompts)})
}

/// The JSON object of the summary.
pub fn summary_json(s: &Summary) -> Value {
    let llm: serde_json::Map<String, Value> = s
        .llm
        .iter()
        .map(|(role, r)| {
            (
                (*role).to_owned(),
                json!({"calls": r.calls, "failures": r.failures, "prompt_chars": r.prompt_chars,
                       "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens}),
            )
        })
        .collect();
    json!({
        "type": "summary",
        "dry_run": s.dry_run,
        "messages": s.messages,
        "channels": s.channels,
        "threads": s.threads,
        "edits": s.edits,
        "deletions": s.deletions,
        "skipped": s.skipped,
        "judgments": s.judgments,
        "replies": s.replies,
        "mention_replies": s.mention_replies,
        "short_replies": s.short_replies,
        "reactions": s.reactions,
        "proactive": s.proactive,
        "openers": s.openers,
        "openers_per_channel_week": s.openers.iter().map(|(c, n)| (c.clone(), json!(*n as f64 / s.weeks().max(f64::EPSILON)))).collect::<serde_json::Map<String, Value>>(),
        "no_replies": s.no_replies,
        "memories": s.memories,
        "llm": llm,
        "prompts_written": s.prompts_written,
        "jobs_run": s.jobs_run,
        "sweeps": s.sweeps,
        "unusable_digests": s.unusable_digests,
        "learnt": s.learnt.iter().map(|(c, f)| json!({"channel": c, "fact": f})).collect::<Vec<_>>(),
        "job_failures": s.job_failures,
        "jobs_left": s.jobs_left,
        "isolation": s.isolation.as_ref().map(|i| json!({
            "prompts": i.prompts, "markers": i.markers, "crossing": i.crossing,
            "examples": i.examples.iter().map(|(n, team, word)| json!({"prompt": n, "team": team, "word": word})).collect::<Vec<_>>(),
        })),
        "first": s.first.map(time),
        "last": s.last.map(time),
        "virtual_seconds": match (s.first, s.last) { (Some(f), Some(l)) => Some((l - f).num_seconds()), _ => None },
        "elapsed_seconds": s.elapsed.as_secs_f64(),
    })
}

impl<W: Write> Sink for JsonSink<W> {
    fn header(&mut self, h: &Header) -> io::Result<()> {
        let v = json!({
            "type": "replay",
            "source": h.source,
            "channels": h.channels.iter().map(|c| json!({"id": c.id, "name": c.name})).collect::<Vec<_>>(),
            "users": h.users,
            "entries": h.entries,
            "first": h.first.map(time),
            "last": h.last.map(time),
            "bot_user_id": h.bot_user_id,
            "bot_name": h.bot_name,
            "dry_run": h.llm.is_none(),
            "llm": h.llm,
            "min_wait_seconds": h.min_wait_seconds,
            "jitter_ratio": h.jitter_ratio,
            "autonomous_replies": h.autonomous_replies,
            "memory_interval_seconds": h.memory_interval_seconds,
            "seed": h.seed,
            "timezone": h.timezone.name(),
        });
        self.line(&v)
    }

    fn event(&mut self, e: &Event) -> io::Result<()> {
        self.line(&event_json(e))
    }

    fn summary(&mut self, s: &Summary) -> io::Result<()> {
        self.line(&summary_json(s))?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{Event, EventKind, Verdict};
    use myao_core::ports::PortError;
    use myao_domain::rules::{Decision, Gate, Score, Signal, Thresholds};
    use myao_domain::{Channel, ChannelId, Ts, Visibility};
    use myao_services::judgment::Unusable;

    fn judgment(outcome: JudgmentOutcome, dry_run: bool) -> Value {
        event_json(&Event {
            at: Ts::parse("1767600000.000100").unwrap().to_datetime(),
            channel: Some(Channel {
                id: ChannelId::parse("C1").unwrap(),
                name: "general".into(),
                visibility: Visibility::PUBLIC,
            }),
            thread_ts: None,
            kind: EventKind::Judgment {
                verdict: Verdict {
                    outcome,
                    dry_run,
                    reply: None,
                },
                prompts: vec![],
            },
        })
    }

    #[test]
    fn judgments_show_their_gate_or_their_ruling() {
        let held = judgment(JudgmentOutcome::Held(Gate::Cooldown), false);
        assert_eq!(held["outcome"], "held");
        assert_eq!(held["gate"], "cooldown");
        assert!(held["ruling"].is_null());
        let old = judgment(JudgmentOutcome::Held(Gate::TooOld), false);
        assert_eq!(
            (&old["outcome"], &old["gate"]),
            (&json!("too_old"), &json!("too_old"))
        );

        let ruling = Ruling {
            score: Score {
                total: 30,
                signals: vec![Signal::UnansweredQuestion, Signal::TwoPeople],
                answers: None,
                again: None,
                wait: None,
            },
            thresholds: Thresholds { low: 20, high: 50 },
            decision: Decision::Ask,
            tuned: 0,
        };
        let (q, two) = (
            Signal::UnansweredQuestion.points(),
            Signal::TwoPeople.points(),
        );
        let silent = JudgmentOutcome::Silent {
            ruling,
            why: Unusable::Llm(PortError::refused("llm", "no LLM")),
        };
        let dry = judgment(silent.clone(), true);
        assert_eq!(dry["outcome"], "dry run");
        assert!(dry["gate"].is_null());
        assert!(dry["reason"].is_null(), "the dry run's is no answer");
        assert_eq!(
            dry["ruling"],
            json!({"decision": "ask", "score": 30, "low": 20, "high": 50,
                   "signals": [{"signal": "unanswered_question", "points": q},
                               {"signal": "two_people", "points": two}],
                   "explain": format!("ask score=30 [20..50) unanswered_question({q:+}) two_people({two:+})")})
        );
        let unusable = judgment(silent, false);
        assert_eq!(
            (&unusable["outcome"], &unusable["reason"]),
            (
                &json!("unusable"),
                &json!("LLM failed: llm refused: no LLM")
            )
        );
    }
}
