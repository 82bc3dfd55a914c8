//! Tenant isolation (issue 46), measured as privacy is: two workspaces
//! installed in one stack talk, each with its own marker words, in a
//! channel of the same id (a channel they share has one id in both); every
//! job the stack runs for them (judgments, replies, digests, facts, the
//! workspace memory) is followed through the real LLM adapter to the stub,
//! and no prompt made for one team carries a word of the other's, nor of
//! anything its memories or facts were written from. DynamoDB on the
//! emulator, ingest taking the events, the jobs carried with their team.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use myao_aws::dynamodb::DynamoStore;
use myao_core::app::ingest::{Ingest, Outcome};
use myao_core::ports::Installations;
use myao_domain::install::{Installation, Token};
use myao_domain::{Job, JobKind, TeamId, TeamJob, UserId};
use myao_services::jobs::run_carried;
use myao_tests::stubs::{at, ts, verdict, Bed, LlmCall, ALICE, BOB, BOT, GENERAL};
use serde_json::json;

/// The two teams, each with the marker of what it says and of the fact
/// its reflection finds.
const TEAMS: [(&str, &str, &str); 2] = [
    ("T0ACME", "MARK-ACME", "MARK-ACMEFACT"),
    ("T0BETA", "MARK-BETA", "MARK-BETAFACT"),
];

const EVERY_KIND: &[JobKind] = &JobKind::ALL;

pub(crate) fn team(id: &str) -> TeamId {
    TeamId::parse(id).expect("a team id")
}

/// `id`'s installation, a day old, with its bot token `xoxb-<id>`.
pub(crate) fn installed(id: &str) -> Installation {
    Installation {
        team: team(id),
        enterprise: None,
        team_name: id.to_lowercase(),
        bot_user_id: UserId::parse(BOT).expect("the bot"),
        scopes: vec!["chat:write".into()],
        bot_token: Token::new(format!("xoxb-{id}")),
        rotation: None,
        installed_at: at(-86_400),
    }
}

/// Every `MARK-...` word of `text`.
fn marks(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("MARK-") && w.len() > 5)
        .map(str::to_owned)
        .collect()
}

/// What `team`'s member says in #general at `offset`, through ingest.
async fn say(
    bed: &Bed<DynamoStore>,
    ingest: &Ingest,
    team: &str,
    offset: i64,
    event: serde_json::Value,
) {
    let body = serde_json::to_vec(&json!({
        "type": "event_callback", "event_id": format!("Ev{team}{offset}"), "team_id": team,
        "event": event, "authorizations": [{"user_id": BOT, "is_bot": true}]
    }))
    .expect("json");
    let envelope = myao_slack::event::parse_envelope(&body).expect("an event");
    let (outcome, _) = ingest.process(envelope, bed.now()).await.expect("ingested");
    assert!(matches!(outcome, Outcome::Stored { .. }), "{outcome:?}");
}

fn message(user: &str, offset: i64, thread: Option<i64>, text: &str) -> serde_json::Value {
    let mut event = json!({
        "type": "message", "channel": GENERAL, "user": user, "text": text,
        "ts": ts(offset).to_string(),
    });
    if let Some(root) = thread {
        event["thread_ts"] = json!(ts(root).to_string());
    }
    event
}

/// Runs every job due until `until`, moving the clock to each, and keeps
/// each LLM call with the team its job was for. Before a team's job, the
/// reflection stub is set to find that team's fact.
async fn drive(
    bed: &Bed<DynamoStore>,
    until: DateTime<Utc>,
    log: &mut Vec<(Option<TeamId>, LlmCall)>,
) {
    while let Some(next) = bed.board.next_due().filter(|next| *next <= until) {
        if next > bed.now() {
            bed.clock.set(next);
        }
        for carried in bed.board.take_due(bed.now()) {
            if let Some(team) = &carried.team {
                let (_, _, fact) = TEAMS.iter().find(|t| t.0 == team.as_str()).expect("a team");
                bed.script.set_reflection(
                    json!({"facts": [{
                        "subject": "Alice", "fact": format!("{fact} アリスは週末に高尾山に登る"),
                        "keywords": ["高尾山"], "importance": 4, "shareable": true,
                        "sources": [1]
                    }]})
                    .to_string(),
                );
            }
            let before = bed.llm_calls().await.len();
            run_carried(&bed.services, EVERY_KIND, &carried)
                .await
                .unwrap_or_else(|e| panic!("{carried:?} failed: {e}"));
            let calls = bed.llm_calls().await.into_iter().skip(before);
            log.extend(calls.map(|c| (carried.team.clone(), c)));
        }
    }
    bed.clock.set(until);
}

/// The stack's recurring run at `when`, and every job it leads to until `until`.
async fn sweep(
    bed: &Bed<DynamoStore>,
    when: i64,
    until: i64,
    log: &mut Vec<(Option<TeamId>, LlmCall)>,
) {
    bed.clock.set(at(when));
    let stacks = TeamJob {
        team: None,
        job: Job::MemorySweep,
    };
    let before = bed.llm_calls().await.len();
    run_carried(&bed.services, EVERY_KIND, &stacks)
        .await
        .expect("the stack's sweep");
    assert_eq!(
        bed.llm_calls().await.len(),
        before,
        "the stack's own part is empty"
    );
    drive(bed, at(until), log).await;
}

#[tokio::test]
async fn no_prompt_of_one_team_carries_the_others_words() {
    let bed: Bed<DynamoStore> = Bed::on_emulator(|s| {
        s.slack_client_id = Some("123.456".into());
        s.installed_workspaces_only = true;
    })
    .await;
    bed.script.set_judgment(verdict(true, Some(0)));
    for (id, ..) in TEAMS {
        bed.store
            .put_installation(&installed(id))
            .await
            .expect("installed");
    }
    let ingest = bed.ingest();
    let mut log = Vec::new();

    // Round one: each team's question and an answer in a thread of #general.
    for (i, (id, mark, _)) in TEAMS.iter().enumerate() {
        let o = i64::try_from(i).expect("small") * 10;
        say(
            &bed,
            &ingest,
            id,
            -900 + o,
            message(
                ALICE,
                -900 + o,
                None,
                &format!("{mark} 週末はどの山に行く？"),
            ),
        )
        .await;
        say(
            &bed,
            &ingest,
            id,
            -800 + o,
            message(BOB, -800 + o, Some(-900 + o), &format!("{mark} 高尾山かな")),
        )
        .await;
    }
    drive(&bed, at(3_000), &mut log).await;
    sweep(&bed, 3_600, 3_500 + 600, &mut log).await;

    // Round two: each team talks again, and asks the bot, with memories
    // and facts everywhere.
    for (i, (id, ..)) in TEAMS.iter().enumerate() {
        let o = i64::try_from(i).expect("small") * 10;
        say(
            &bed,
            &ingest,
            id,
            4_200 + o,
            message(
                ALICE,
                4_200 + o,
                Some(-900 + o),
                "ところで高尾山どうだった？",
            ),
        )
        .await;
        say(
            &bed,
            &ingest,
            id,
            4_300 + o,
            message(
                BOB,
                4_300 + o,
                None,
                &format!("<@{BOT}> 高尾山のこと何か覚えてる？"),
            ),
        )
        .await;
    }
    drive(&bed, at(7_000), &mut log).await;
    sweep(&bed, 7_300, 7_300 + 600, &mut log).await;

    // Round three: each asks the bot about what its facts hold.
    for (i, (id, ..)) in TEAMS.iter().enumerate() {
        let o = i64::try_from(i).expect("small") * 10;
        let ask = format!("<@{BOT}> アリスは週末に高尾山に登るんだっけ？");
        say(
            &bed,
            &ingest,
            id,
            8_000 + o,
            message(BOB, 8_000 + o, None, &ask),
        )
        .await;
    }
    drive(&bed, at(9_000), &mut log).await;

    // Every prompt is one team's, and holds that team's words only.
    let mut per_team = [0usize; 2];
    for (whose, call) in &log {
        let whose = whose.as_ref().expect("every call was a team's");
        let i = TEAMS
            .iter()
            .position(|t| t.0 == whose.as_str())
            .expect("a team");
        per_team[i] += 1;
        let (_, mark, fact) = TEAMS[i];
        let allowed = BTreeSet::from([mark.to_owned(), fact.to_owned()]);
        let found = marks(&call.body.to_string());
        assert!(
            found.is_subset(&allowed),
            "a {:?} prompt of {whose} holds {found:?}:\n{}",
            call.kind,
            call.system
        );
    }
    // ...and the words did travel within each team: the filter is not silence.
    for (i, (id, mark, fact)) in TEAMS.iter().enumerate() {
        assert!(per_team[i] >= 6, "{id}: {} prompts", per_team[i]);
        let theirs: Vec<&LlmCall> = log
            .iter()
            .filter(|(w, _)| w.as_ref().map(TeamId::as_str) == Some(*id))
            .map(|(_, c)| c)
            .collect();
        let last = theirs
            .last()
            .map(|c| c.body.to_string())
            .unwrap_or_default();
        let later = theirs
            .iter()
            .rev()
            .take(theirs.len() / 2)
            .map(|c| c.body.to_string())
            .collect::<String>();
        assert!(
            later.contains(mark),
            "{id}'s memories reach its later prompts"
        );
        assert!(
            later.contains(fact),
            "{id}'s fact reaches its later prompts:\n{last}"
        );
    }
    println!(
        "tenant isolation: {} prompts ({} and {}), 0 carrying the other team's words",
        log.len(),
        per_team[0],
        per_team[1]
    );
}
