//! Recall by meaning: a fact alluded to in other words comes back into the
//! prompt, in English and Japanese; an unrelated conversation gets none; an
//! embedder that fails means recall by words, not an error; facts stored
//! before are embedded by the memory run; a private channel's fact stays
//! there. Over the real memory and judgment code, DynamoDB on the emulator
//! (and the twin for the store's round trip), the LLM and Slack stubs, a
//! deterministic embedder (`Concepts`) or the provider's embedder against a
//! stand-in `/v1/embeddings` server.

use std::sync::Arc;

use chrono::Duration;
use myao_aws::dynamodb::DynamoStore;
use myao_core::adapters::twins::MemoryStore;
use myao_core::ports::{Embedded, Embedder, FactRecords};
use myao_domain::facts::Fact;
use myao_domain::meaning::Meaning;
use myao_domain::settings::Embedder as Choice;
use myao_testkit::embedder::{Concepts, TEST_MODEL};
use myao_testkit::ids::{channel, user};
use myao_tests::stubs::{
    assert_in_order, at, message, ts, Bed, PromptKind, ALICE, BOB, GENERAL, SECRET,
};
use myao_wire::embedder::ChosenEmbedder;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::facts::{
    digest, facts, forget_me, judgment, reflect_on_the_move, seed_move_in, the_move,
};

/// Osaka, its food and its region mean one thing; so do builds and CI.
fn concepts() -> Arc<Concepts> {
    Arc::new(Concepts::new(&[
        &[
            "osaka",
            "大阪",
            "kansai",
            "関西",
            "takoyaki",
            "たこ焼き",
            "namba",
        ],
        &["build", "ci", "ビルド"],
    ]))
}

/// A bed on the emulator whose services recall by meaning with `embedder`.
async fn bed_with(embedder: Arc<dyn Embedder>) -> Bed<DynamoStore> {
    let mut bed = Bed::on_emulator(|_| {}).await;
    bed.services.recall_by_meaning_with(embedder);
    bed
}

/// The judgment prompt after Alice's new message `text` at the top level
/// of #general.
async fn judged(bed: &Bed<DynamoStore>, text: &str) -> String {
    let calls = bed.llm_calls_of(PromptKind::Judgment).await.len();
    let at = ts(-100 + 10 * i64::try_from(calls).unwrap_or(0));
    bed.seed(&[message(GENERAL, ALICE, at, None, text)]).await;
    bed.run(&judgment(at)).await;
    let prompts = bed.llm_calls_of(PromptKind::Judgment).await;
    prompts.last().expect("a judgment prompt").system.clone()
}

const THE_FACT: &str = "Bob moved to Osaka last month, near Namba.";

#[tokio::test]
async fn a_fact_alluded_to_without_its_words_is_recalled_in_english_and_japanese() {
    for allusion in [
        "anyone know good takoyaki spots? heading to Kansai",
        "関西でおいしいたこ焼きの店知ってる？",
    ] {
        let bed = bed_with(concepts()).await;
        reflect_on_the_move(&bed).await;
        let written = facts(&bed).await;
        let meaning = written[0].meaning.as_ref().expect("embedded when written");
        assert_eq!(meaning.model(), TEST_MODEL);
        let prompt = judged(&bed, allusion).await;
        assert_in_order(&prompt, &["## 覚えていること", THE_FACT]);
    }
    // The words alone do not call it up: meaning does.
    let bed = Bed::on_emulator(|_| {}).await;
    reflect_on_the_move(&bed).await;
    let prompt = judged(&bed, "anyone know good takoyaki spots? heading to Kansai").await;
    assert!(!prompt.contains(THE_FACT), "{prompt}");
}

#[tokio::test]
async fn a_conversation_about_something_else_recalls_nothing() {
    let bed = bed_with(concepts()).await;
    reflect_on_the_move(&bed).await;
    let prompt = judged(&bed, "the build is red again, can someone look at CI?").await;
    assert!(!prompt.contains("## 覚えていること"), "{prompt}");
}

#[tokio::test]
async fn the_embedder_off_by_the_setting_is_never_asked() {
    let embedder = concepts();
    let mut bed = Bed::on_emulator(|s| s.embedder = Choice::Off).await;
    bed.services.recall_by_meaning_with(embedder.clone());
    reflect_on_the_move(&bed).await;
    assert!(facts(&bed).await[0].meaning.is_none());
    let prompt = judged(&bed, "Bob, is Osaka treating you well?").await;
    assert_in_order(&prompt, &["## 覚えていること", THE_FACT]);
    assert_eq!(embedder.calls(), 0);
}

#[tokio::test]
async fn an_embedder_that_fails_means_recall_by_words_not_an_error() {
    let embedder = concepts();
    let bed = bed_with(embedder.clone()).await;
    reflect_on_the_move(&bed).await;
    embedder.fail();
    let before = embedder.calls();
    // The same words still recall it; the judgment runs as before.
    let prompt = judged(&bed, "Bob, is Osaka treating you well?").await;
    assert_in_order(&prompt, &["## 覚えていること", THE_FACT]);
    assert_eq!(
        embedder.calls(),
        before + 1,
        "the judgment asked, and it failed"
    );

    // A fact written while it fails is kept, without its meaning.
    let embedder = concepts();
    embedder.fail();
    let bed = bed_with(embedder).await;
    reflect_on_the_move(&bed).await;
    let written = facts(&bed).await;
    assert_eq!(written.len(), 1);
    assert!(written[0].meaning.is_none());
}

#[tokio::test]
async fn facts_stored_before_are_embedded_by_the_memory_run() {
    let mut bed = Bed::on_emulator(|_| {}).await;
    reflect_on_the_move(&bed).await;
    let before = facts(&bed).await;
    assert!(before[0].meaning.is_none(), "no embedder then");

    bed.services.recall_by_meaning_with(concepts());
    bed.clock.advance(Duration::hours(1));
    bed.run(&digest()).await;
    let after = facts(&bed).await;
    assert_eq!(after.len(), 1);
    assert_eq!(
        after[0].meaning.as_ref().map(Meaning::model),
        Some(TEST_MODEL)
    );
    assert_eq!(
        Fact {
            meaning: None,
            ..after[0].clone()
        },
        before[0],
        "the rest of the fact is as it was"
    );
    let prompt = judged(&bed, "関西でおいしいたこ焼きの店知ってる？").await;
    assert_in_order(&prompt, &["## 覚えていること", THE_FACT]);
}

#[tokio::test]
async fn a_private_channels_fact_is_never_recalled_in_a_public_one() {
    let bed = bed_with(concepts()).await;
    seed_move_in(&bed, SECRET).await;
    bed.script.set_reflection(the_move());
    bed.run(&myao_domain::Job::ChannelMemory(
        myao_domain::ChannelMemoryJob {
            channel: channel(SECRET),
        },
    ))
    .await;
    let secret = bed.store.facts(&channel(SECRET)).await.expect("facts");
    assert_eq!(secret.len(), 1, "{secret:?}");
    assert!(secret[0].meaning.is_some());
    let prompt = judged(&bed, "関西でおいしいたこ焼きの店知ってる？").await;
    assert!(!prompt.contains(THE_FACT), "{prompt}");
}

/// A fact of #general with its cues, as stored.
fn stored_fact() -> Fact {
    Fact {
        id: "1767600000.000100-0".into(),
        channel: channel(GENERAL),
        subject: "Bob".into(),
        text: THE_FACT.into(),
        keywords: vec!["osaka".into()],
        cues: vec!["takoyaki".into(), "関西".into()],
        importance: 4,
        shareable: true,
        sources: vec![ts(-880)],
        speakers: vec![user("UBOB")],
        about: None,
        written_at: at(0),
        outdated: false,
        meaning: None,
    }
}

/// A fact with its cues and meaning, read back whole from `store`.
async fn round_trip(store: &dyn FactRecords) {
    let mut fact = stored_fact();
    let v = concepts()
        .embed(&[THE_FACT.to_owned()], Embedded::Passage)
        .await
        .expect("vectors");
    fact.meaning = Some(Meaning::of(&v.model, &v.vectors[0]));
    store
        .put_fact(&fact, at(0) + Duration::days(3_650))
        .await
        .expect("put");
    let read = store.facts(&channel(GENERAL)).await.expect("read");
    assert_eq!(read, vec![fact]);
}

#[tokio::test]
async fn a_facts_meaning_and_cues_survive_the_store_emulator_and_twin() {
    round_trip(&myao_tests::fresh_store().await).await;
    round_trip(&MemoryStore::new(myao_testkit::time::clock_at(at(0)))).await;
}

/// Storing a fact again with its meaning (the hourly run) never brings back
/// one forgotten in between: emulator and twin.
async fn replace_keeps_forgotten(store: &dyn FactRecords) {
    let fact = stored_fact();
    let until = at(0) + Duration::days(3_650);
    assert!(!store.replace_fact(&fact, until).await.expect("replace"));
    store.put_fact(&fact, until).await.expect("put");
    assert!(store.replace_fact(&fact, until).await.expect("replace"));
    store
        .delete_fact(&fact.channel, &fact.id)
        .await
        .expect("delete");
    assert!(!store.replace_fact(&fact, until).await.expect("replace"));
    assert!(store
        .facts(&channel(GENERAL))
        .await
        .expect("read")
        .is_empty());
}

#[tokio::test]
async fn a_fact_forgotten_while_it_is_embedded_stays_forgotten() {
    replace_keeps_forgotten(&myao_tests::fresh_store().await).await;
    replace_keeps_forgotten(&MemoryStore::new(myao_testkit::time::clock_at(at(0)))).await;
}

/// A text the provider will not take holds no other fact back: the
/// hourly run tries each alone, and embeds the rest.
#[tokio::test]
async fn a_fact_the_embedder_refuses_holds_no_other_back() {
    let mut bed = Bed::on_emulator(|_| {}).await;
    reflect_on_the_move(&bed).await;
    let mut other = stored_fact();
    other.id = "1767599000.000100-0".into();
    other.text = "Alice keeps a sourdough starter.".into();
    other.cues = vec!["sourdough".into(), "baking".into()];
    bed.store
        .put_fact(&other, at(0) + Duration::days(30))
        .await
        .expect("put");
    let embedder = concepts();
    embedder.refuse_texts_with("sourdough");
    bed.services.recall_by_meaning_with(embedder);
    bed.clock.advance(Duration::hours(1));
    bed.run(&digest()).await;
    let after = facts(&bed).await;
    let meaning_of = |id: &str| {
        after
            .iter()
            .find(|f| f.id == id)
            .map(|f| f.meaning.is_some())
    };
    assert_eq!(
        meaning_of(&other.id),
        Some(false),
        "refused: left as it was"
    );
    let moved = after.iter().find(|f| f.text == THE_FACT).expect("the move");
    assert!(moved.meaning.is_some(), "{after:?}");
}

/// The provider's embedder (the `embedder` setting names a model) against
/// a stand-in `/v1/embeddings`: osaka-like texts one way, the rest another.
#[tokio::test]
async fn the_providers_embedder_recalls_by_meaning_and_its_failure_means_words() {
    let mut bed = Bed::on_emulator(|s| {
        s.embedder = Choice::parse("openai:text-embedding-3-small").expect("a setting");
    })
    .await;
    let secrets = Arc::new(
        myao_core::adapters::system::StaticSecrets::new().with("llm_api_key", "fake-llm-key"),
    );
    let chosen = ChosenEmbedder::new(
        myao_http::http_client(),
        bed.services.ports.settings.clone(),
        secrets,
        "llm_api_key",
    );
    bed.services.recall_by_meaning_with(Arc::new(chosen));
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(|request: &wiremock::Request| {
            let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
            let concepts = concepts();
            let data: Vec<_> = body["input"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, t)| json!({"index": i, "embedding": concepts.vector(t.as_str().unwrap_or(""))}))
                .collect();
            assert_eq!(body["model"], "text-embedding-3-small");
            ResponseTemplate::new(200).set_body_json(json!({"data": data}))
        })
        .up_to_n_times(3)
        .mount(&bed.llm_server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&bed.llm_server)
        .await;

    reflect_on_the_move(&bed).await;
    let written = facts(&bed).await;
    assert_eq!(
        written[0].meaning.as_ref().map(Meaning::model),
        Some("text-embedding-3-small")
    );
    let prompt = judged(&bed, "関西でおいしいたこ焼きの店知ってる？").await;
    assert_in_order(&prompt, &["## 覚えていること", THE_FACT]);

    // From now on it answers 500: the judgment runs as before, and the
    // fact's own words still recall it.
    let prompt = judged(&bed, "Bob, is Osaka treating you well?").await;
    assert_in_order(&prompt, &["## 覚えていること", THE_FACT]);
}

/// Who said what: Bob tells the channel of Alice's licence. The fact is
/// Alice's (its `about`), said by Bob (its speaker), and a later prompt
/// says both; Alice's "forget me" forgets it, though she never said it
/// and its subject is not her name.
#[tokio::test]
async fn a_fact_one_person_stated_about_another_is_recalled_as_theirs() {
    let bed = Bed::on_emulator(|s| s.reflection_min_messages = 1).await;
    let root = ts(-900);
    bed.seed(&[
        message(GENERAL, ALICE, root, None, "any news from everyone?"),
        message(
            GENERAL,
            BOB,
            ts(-880),
            Some(root),
            "Alice finally got her pilot's licence last week!",
        ),
    ])
    .await;
    bed.script.set_reflection(
        json!({"facts": [{
            "subject": "a pilot's licence", "fact": "Alice got her pilot's licence.",
            "keywords": ["pilot", "licence"], "about": "alice", "importance": 4,
            "shareable": true, "sources": [2]
        }]})
        .to_string(),
    );
    bed.run(&digest()).await;
    let written = facts(&bed).await;
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0].about, Some(user(ALICE)));
    assert_eq!(written[0].speakers, vec![user(BOB)]);
    assert!(
        bed.fact_asks().await[0].system.contains("about"),
        "the digest asks whom a fact is about"
    );

    let prompt = judged(
        &bed,
        "congrats on the pilot licence, when is the first flight?",
    )
    .await;
    assert_in_order(
        &prompt,
        &[
            "## 覚えていること",
            "Alice got her pilot's licence.（aliceのこと、bobが話した）",
        ],
    );

    forget_me(&bed, ALICE).await;
    assert!(
        facts(&bed).await.is_empty(),
        "the fact about Alice is forgotten"
    );
}

/// The `embedder` setting chooses, call by call: the bundled model, Amazon
/// Bedrock's (`bedrock:MODEL`) or the OpenAI-compatible API's
/// (`openai:MODEL`).
#[tokio::test]
async fn the_setting_chooses_the_bundled_model_bedrock_or_the_openai_compatible_api() {
    use myao_core::adapters::system::{FixedSettings, StaticSecrets};
    use myao_domain::Settings;

    let chosen = |settings: Settings| {
        let settings = Arc::new(FixedSettings::new(settings));
        ChosenEmbedder::new(
            myao_http::http_client(),
            settings,
            Arc::new(StaticSecrets::new()),
            "",
        )
        .with_bedrock(concepts())
    };
    let texts = [THE_FACT.to_owned()];
    let bundled = chosen(Settings::default())
        .embed(&texts, Embedded::Passage)
        .await
        .expect("the bundled model (bash infra/fetch-embedder.sh)");
    assert_eq!(bundled.model, myao_embed::MODEL);

    let on_bedrock = Settings {
        embedder: Choice::parse("bedrock:cohere.embed-multilingual-v3").expect("a setting"),
        ..Settings::default()
    };
    let v = chosen(on_bedrock)
        .embed(&texts, Embedded::Passage)
        .await
        .expect("the Bedrock embedder (here the test one)");
    assert_eq!(v.model, TEST_MODEL);

    // The OpenAI-compatible API at an address where nothing answers.
    let elsewhere = Settings {
        embedder: Choice::parse("openai:text-embedding-3-small").expect("a setting"),
        llm_base_url: "http://127.0.0.1:9".into(),
        llm_timeout_seconds: 2,
        ..Settings::default()
    };
    assert!(chosen(elsewhere)
        .embed(&texts, Embedded::Passage)
        .await
        .is_err());
}
