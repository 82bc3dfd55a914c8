//! Every job kind's JSON, as schedules and queues carry it: byte for byte
//! what earlier versions wrote, so a job one version queued or scheduled is
//! read by the next (and each version's jobs by the one before).

#[cfg(test)]
mod wire {
    use myao_domain::grounds::{Grounds, Scored, Spoke};
    use myao_domain::rules::{Chattiness, Signal};
    use myao_domain::{
        ChannelId, ChannelMemoryJob, EmojiName, Job, JudgmentJob, ProactiveJob, Reply, ResponseJob,
        TeamId, TeamJob, ThreadMemoryJob, Ts,
    };

    fn channel() -> ChannelId {
        ChannelId::parse("C1").unwrap()
    }

    fn ts(s: &str) -> Ts {
        Ts::parse(s).unwrap()
    }

    fn grounds() -> Grounds {
        Grounds {
            outcome: Spoke::LlmYes,
            level: Chattiness::Normal,
            score: Some(35),
            thresholds: Some([20, 40]),
            // A signal an earlier version scored, and one of this version.
            signals: vec![
                Scored::Retired {
                    name: "question".into(),
                    points: 60,
                },
                Scored::of(Signal::TwoPeople),
            ],
            tuning: -5,
            confidence: Some(80),
        }
    }

    /// One job of every kind and form, with the JSON the previous version
    /// wrote for it.
    fn every_job() -> Vec<(Job, &'static str)> {
        vec![
            (
                Job::Judgment(JudgmentJob {
                    channel: channel(),
                    thread_ts: Some(ts("1.0")),
                    newest_ts: ts("5.0"),
                }),
                r#"{"kind":"judgment","channel":"C1","thread_ts":"1.000000","newest_ts":"5.000000"}"#,
            ),
            (
                Job::Judgment(JudgmentJob {
                    channel: channel(),
                    thread_ts: None,
                    newest_ts: ts("5.0"),
                }),
                r#"{"kind":"judgment","channel":"C1","thread_ts":null,"newest_ts":"5.000000"}"#,
            ),
            (
                Job::Response(ResponseJob {
                    channel: channel(),
                    thread_ts: None,
                    newest_ts: ts("5.0"),
                    mention: true,
                    reply: Reply::Full,
                    seen_ts: None,
                    grounds: None,
                }),
                r#"{"kind":"response","channel":"C1","thread_ts":null,"newest_ts":"5.000000","mention":true}"#,
            ),
            (
                Job::Response(ResponseJob {
                    channel: channel(),
                    thread_ts: Some(ts("1.0")),
                    newest_ts: ts("5.0"),
                    mention: false,
                    reply: Reply::Short,
                    seen_ts: Some(ts("6.0")),
                    grounds: Some(grounds()),
                }),
                r#"{"kind":"response","channel":"C1","thread_ts":"1.000000","newest_ts":"5.000000","mention":false,"reply":"short","seen_ts":"6.000000","grounds":{"outcome":"llm_yes","level":"normal","score":35,"thresholds":[20,40],"signals":["question(+60)","two_people(-10)"],"tuning":-5,"confidence":80}}"#,
            ),
            (
                Job::Response(ResponseJob {
                    channel: channel(),
                    thread_ts: Some(ts("1.0")),
                    newest_ts: ts("5.0"),
                    mention: false,
                    reply: Reply::Reaction {
                        emoji: EmojiName::wave(),
                    },
                    seen_ts: None,
                    grounds: None,
                }),
                r#"{"kind":"response","channel":"C1","thread_ts":"1.000000","newest_ts":"5.000000","mention":false,"reply":{"reaction":{"emoji":"wave"}}}"#,
            ),
            (
                Job::ThreadMemory(ThreadMemoryJob {
                    channel: channel(),
                    thread_ts: ts("1.0"),
                }),
                r#"{"kind":"thread_memory","channel":"C1","thread_ts":"1.000000"}"#,
            ),
            (Job::MemorySweep, r#"{"kind":"memory_sweep"}"#),
            (
                Job::ChannelMemory(ChannelMemoryJob { channel: channel() }),
                r#"{"kind":"channel_memory","channel":"C1"}"#,
            ),
            (Job::WorkspaceMemory, r#"{"kind":"workspace_memory"}"#),
            (Job::Forget, r#"{"kind":"forget"}"#),
            (
                Job::Proactive(ProactiveJob {
                    channel: channel(),
                    made_at: ts("5.0"),
                }),
                r#"{"kind":"proactive","channel":"C1","made_at":"5.000000"}"#,
            ),
            (Job::Purge, r#"{"kind":"purge"}"#),
        ]
    }

    #[test]
    fn every_job_is_written_byte_for_byte_as_before() {
        for (job, wire) in every_job() {
            assert_eq!(serde_json::to_string(&job).unwrap(), wire, "{job:?}");
            assert_eq!(serde_json::from_str::<Job>(wire).unwrap(), job, "{wire}");
        }
    }

    #[test]
    fn a_teams_job_is_its_job_with_the_team_first() {
        for (job, wire) in every_job() {
            let team = TeamJob {
                team: Some(TeamId::parse("T0ACME").unwrap()),
                job: job.clone(),
            };
            let written = format!(r#"{{"team":"T0ACME",{}"#, &wire[1..]);
            assert_eq!(serde_json::to_string(&team).unwrap(), written);
            assert_eq!(serde_json::from_str::<TeamJob>(&written).unwrap(), team);
            let stack = TeamJob { team: None, job };
            assert_eq!(serde_json::to_string(&stack).unwrap(), wire);
        }
    }

    #[test]
    fn a_job_of_an_earlier_version_is_read() {
        // Before forms, seen messages and grounds: a response job had none.
        let old = r#"{"kind":"response","channel":"C1","thread_ts":"1.000000","newest_ts":"5.000000","mention":false}"#;
        let job = serde_json::from_str::<Job>(old).unwrap();
        assert_eq!(
            job,
            Job::Response(ResponseJob {
                channel: channel(),
                thread_ts: Some(ts("1.0")),
                newest_ts: ts("5.0"),
                mention: false,
                reply: Reply::Full,
                seen_ts: None,
                grounds: None,
            })
        );
    }
}
