//! Fact recall: does a later conversation that alludes to something said
//! days before get the right fact in its prompt, and what does remembering
//! cost in LLM calls?
//!
//! A generated workspace (seeded, three channels, ten people): in quiet
//! threads people state [`FACTS`] ("I moved to Osaka last month", "先月京都に
//! 引っ越しました"), among unrelated chatter; a day later, other threads
//! allude to each fact with other words around the same keywords ("how's
//! life in Osaka treating you?"), and control threads talk shop. The export
//! goes through the replay (`myao_local::replay`: ingest, the job board on a
//! virtual clock, judgment, response, the channels' digests, the in-memory
//! store), so storage, scoring and recall are the production code.
//!
//! The LLM is an in-process script. The facts of a digest's answer are the
//! benchmark's own extraction of the fact stated in the messages it is
//! shown (the sentence and keywords below), so the figure measures what the
//! code owns, storage and recall, not a model's extraction. Judgments always
//! say yes with a short reply; memories are a fixed line.
//!
//! Reported: recall@3, whether the right fact is among the (at most three)
//! facts of the "## 覚えていること" section of the judgment prompt of each
//! alluding thread; false recall, how many control threads get any fact;
//! and the LLM calls per 100 messages by kind, once with every conversation
//! judged by the LLM (the recall run) and once at the default rule
//! thresholds.
//!
//! `cargo bench -p myao-local --bench recall`

// Tests may be longer than production code's 80 lines (clippy.toml): a
// table of cases or a scenario reads best whole.
#![allow(clippy::too_many_lines)]

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use myao_core::ports::{Llm, LlmReply, LlmRequest, LlmRole, PortError};
use myao_domain::{ChannelId, Settings, Ts, UserId};
use myao_local::export::{Entry, Export};
use serde_json::json;

mod common;
use common::{people, public_channels, Lcg};
mod scripted;
use scripted::{digest_answer, replay_scripted, DIGEST_MARK};

/// One fact: who states it, how, what a digest writes of it, and how it
/// is alluded to later.
struct Spec {
    who: &'static str,
    said: &'static str,
    fact: &'static str,
    keywords: &'static [&'static str],
    allusion: &'static str,
}

const fn spec(
    who: &'static str,
    said: &'static str,
    fact: &'static str,
    keywords: &'static [&'static str],
    allusion: &'static str,
) -> Spec {
    Spec {
        who,
        said,
        fact,
        keywords,
        allusion,
    }
}

#[rustfmt::skip]
const FACTS: &[Spec] = &[
    spec("bob", "I moved to Osaka last month, still unpacking boxes", "Bob moved to Osaka last month.", &["osaka", "moved"], "Bob, how's life in Osaka treating you?"),
    spec("alice", "my cat is called Mochi, she is three now", "Alice has a cat called Mochi.", &["cat", "mochi"], "Alice, does Mochi still knock things off your desk?"),
    spec("sam", "I started learning the cello in March", "Sam is learning the cello since March.", &["cello"], "Sam, are you still practicing the cello every evening?"),
    spec("maria", "I'm training for the Berlin marathon in September", "Maria is training for the Berlin marathon in September.", &["berlin", "marathon"], "Maria, how's the marathon prep going? Berlin is soon"),
    spec("bob", "we adopted a shiba, his name is Kuro", "Bob adopted a shiba named Kuro.", &["shiba", "kuro", "dog"], "Bob, any new photos of Kuro?"),
    spec("alice", "I'm allergic to peanuts, so no satay for me", "Alice is allergic to peanuts.", &["peanuts", "allergy"], "heads up Alice, the caterer says half the menu has peanuts"),
    spec("sam", "I switched to Neovim last week, no going back", "Sam switched to Neovim as his editor.", &["neovim", "editor"], "Sam, has Neovim converted you for good?"),
    spec("maria", "my sister is getting married in Lisbon in June", "Maria's sister is getting married in Lisbon in June.", &["lisbon", "wedding", "sister"], "Maria, when do you fly out to Lisbon?"),
    spec("chris", "I finally bought a 3D printer, a Prusa", "Chris bought a Prusa 3D printer.", &["prusa", "printer"], "Chris, printed anything cool on the Prusa yet?"),
    spec("dana", "I'm going on parental leave from May, baby due then", "Dana goes on parental leave in May, a baby is due.", &["parental leave", "baby"], "Dana, when does your parental leave start again?"),
    spec("chris", "I play bass in a band called Static Owls", "Chris plays bass in the band Static Owls.", &["bass", "static owls", "band"], "Chris, when's the next Static Owls gig?"),
    spec("dana", "I grew up in Nairobi, moved here at twenty", "Dana grew up in Nairobi.", &["nairobi"], "Dana, have you been back to Nairobi lately?"),
    spec("bob", "my daughter Emi started primary school this week", "Bob's daughter Emi started primary school.", &["emi", "school", "daughter"], "Bob, how does Emi like school so far?"),
    spec("alice", "I've been vegetarian since last year", "Alice is vegetarian.", &["vegetarian"], "Alice, does the new ramen place have anything vegetarian?"),
    spec("sam", "I'm going to climb Mount Fuji in August", "Sam plans to climb Mount Fuji in August.", &["fuji", "climb"], "Sam, did you book the mountain huts for Fuji?"),
    spec("maria", "I just got my pilot license!", "Maria got her pilot license.", &["pilot", "license"], "Maria, flown anywhere fun as a pilot lately?"),
    spec("chris", "I'm fostering two kittens, Pixel and Byte", "Chris is fostering two kittens, Pixel and Byte.", &["kittens", "pixel", "byte"], "Chris, how are Pixel and Byte doing?"),
    spec("dana", "I brew my own kombucha at home", "Dana brews her own kombucha.", &["kombucha"], "Dana, could you bring some kombucha on Friday?"),
    spec("bob", "I broke my wrist skiing on Sunday", "Bob broke his wrist skiing.", &["wrist", "skiing"], "Bob, is the wrist healing ok?"),
    spec("alice", "our team is migrating everything to Postgres 17", "Alice's team is migrating to Postgres 17.", &["postgres", "migration"], "Alice, did the Postgres upgrade go smoothly in the end?"),
    spec("sam", "I'm reading Dune for the first time", "Sam is reading Dune.", &["dune", "book"], "Sam, did you finish Dune yet?"),
    spec("maria", "my favourite coffee place is Blue Heron on 5th street", "Maria's favourite coffee place is Blue Heron.", &["blue heron", "coffee"], "Maria, meet at Blue Heron tomorrow morning?"),
    spec("chris", "I'm learning Portuguese for a trip to Brazil", "Chris is learning Portuguese for a trip to Brazil.", &["portuguese", "brazil"], "Chris, how's your Portuguese coming along?"),
    spec("dana", "I keep bees on my roof now, two hives", "Dana keeps bees on her roof, two hives.", &["bees", "hives"], "Dana, are the bees getting through the cold?"),
    spec("ken", "I'm building a mechanical keyboard with Gateron switches", "Ken is building a mechanical keyboard with Gateron switches.", &["keyboard", "gateron"], "Ken, did the Gateron switches arrive?"),
    spec("ken", "big Hanshin Tigers fan here, since I was a kid", "Ken is a Hanshin Tigers fan.", &["hanshin", "tigers"], "Ken, did you see the Tigers game last night?"),
    spec("yuki", "I'm moving to Sapporo in April for the new office", "Yuki is moving to Sapporo in April.", &["sapporo", "moving"], "Yuki, ready for the Sapporo winters?"),
    spec("yuki", "I take pottery classes on Saturdays", "Yuki takes pottery classes on Saturdays.", &["pottery"], "Yuki, made any new pottery lately?"),
    spec("bob", "I'm colour blind, red and green look the same to me", "Bob is red-green colour blind.", &["colour blind", "red", "green"], "Bob, can you tell the red and green lines apart on the new chart?"),
    spec("alice", "I run a Dungeons and Dragons campaign on Thursdays", "Alice runs a Dungeons and Dragons campaign on Thursdays.", &["dungeons", "dragons", "campaign"], "Alice, did the party survive your Dragons campaign this week?"),
    spec("sam", "I bought a Tesla Model 3 last month", "Sam drives a Tesla Model 3.", &["tesla"], "Sam, how far does the Tesla get on a charge in winter?"),
    spec("maria", "I volunteer at the animal shelter on Sundays", "Maria volunteers at the animal shelter on Sundays.", &["shelter", "volunteer"], "Maria, any dogs at the shelter looking for a home?"),
    spec("chris", "I'm doing a part-time PhD in robotics", "Chris is doing a part-time PhD in robotics.", &["phd", "robotics"], "Chris, when's your robotics PhD defence?"),
    spec("dana", "my partner is a chef at Ember downtown", "Dana's partner is a chef at Ember.", &["chef", "ember"], "Dana, could we get a table at Ember on Friday?"),
    spec("ken", "I got a standing desk from IKEA, back pain is gone", "Ken has a standing desk from IKEA.", &["standing desk", "ikea"], "Ken, is the IKEA standing desk worth it?"),
    spec("haruto", "先月京都に引っ越しました", "ハルトは先月京都に引っ越した。", &["京都", "引っ越し"], "ハルトさん、京都の暮らしはどう？"),
    spec("sakura", "うちの猫はタマっていいます", "サクラの飼い猫の名前はタマ。", &["猫", "タマ"], "サクラさん、タマちゃん元気にしてる？"),
    spec("haruto", "毎朝ジョギングしてます", "ハルトは毎朝ジョギングしている。", &["ジョギング"], "ハルトさん、今朝もジョギング行った？"),
    spec("sakura", "来月から育休に入ります", "サクラは来月から育休に入る。", &["育休"], "サクラさん、育休っていつからでしたっけ？"),
    spec("yuki", "最近ギターを始めました", "ユキは最近ギターを始めた。", &["ギター"], "ユキさん、ギターの練習は順調？"),
    spec("ken", "週末は北海道でスキーでした", "ケンは週末に北海道でスキーをした。", &["北海道", "スキー"], "ケンさん、北海道の雪はどうだった？"),
    spec("haruto", "そば打ちが趣味なんです", "ハルトの趣味はそば打ち。", &["そば打ち"], "ハルトさん、最近もそば打ちしてる？"),
    spec("sakura", "京都の大学院に通っています", "サクラは大学院に通っている。", &["大学院"], "サクラさん、大学院の研究は進んでる？"),
    spec("yuki", "実は納豆が苦手です", "ユキは納豆が苦手。", &["納豆"], "ユキさん、朝ごはんに納豆が出るけど大丈夫？"),
    spec("ken", "新しいカメラを買いました、富士フイルムのX100です", "ケンは富士フイルムのX100を買った。", &["カメラ", "富士フイルム"], "ケンさん、富士フイルムで何か撮った？"),
    spec("haruto", "来年の春に結婚します", "ハルトは来年の春に結婚する。", &["結婚"], "ハルトさん、結婚式の準備は進んでる？"),
    spec("sakura", "毎週土曜は書道教室に行ってます", "サクラは毎週土曜に書道教室に通う。", &["書道"], "サクラさん、書道の作品を見せて！"),
    spec("yuki", "沖縄出身です", "ユキは沖縄出身。", &["沖縄"], "ユキさん、夏は沖縄に帰るの？"),
    spec("ken", "ベランダで盆栽を育てています", "ケンはベランダで盆栽を育てている。", &["盆栽"], "ケンさん、盆栽の手入れって難しい？"),
    spec("yuki", "来月、神戸のハーフマラソンに出ます", "ユキは来月の神戸ハーフマラソンに出る。", &["神戸", "マラソン"], "ユキさん、神戸のハーフはいつだっけ？"),
];

const PEOPLE: &[&str] = &[
    "bob", "alice", "sam", "maria", "chris", "dana", "ken", "yuki", "haruto", "sakura",
];
const CHANNELS: &[&str] = &["general", "random", "dev"];

/// Thread openers that invite news.
const OPENERS: &[&str] = &[
    "how was everyone's weekend?",
    "any news from everyone?",
    "what's everyone been up to?",
    "週末どうだった？",
    "最近どう？",
];
/// What others answer to news.
const NODS: &[&str] = &[
    "nice!",
    "oh wow, congrats",
    "that's so cool",
    "いいね！",
    "すごい！",
    "ha, love it",
];
/// What the person says after their news, or when asked about it later.
const FOLLOW_UPS: &[&str] = &[
    "yeah, pretty excited about it",
    "thanks! will tell you more later",
    "haha yes, all good",
    "うん、楽しみ",
    "ありがとう、まあまあかな",
];
/// Shop talk, the chatter between the rest and the control threads.
const CHATTER: &[&str] = &[
    "the build is red again",
    "who's reviewing the release notes?",
    "deploy finished, all checks passed",
    "can someone look at the flaky test in CI?",
    "standup moved to 10:30 tomorrow",
    "I'll merge after lunch",
    "docs are updated for the API change",
    "the staging server is slow today",
    "rollback done, investigating",
    "PR is ready for review",
    "which branch has the hotfix?",
    "the dashboard timed out for me",
    "ビルドが落ちてる",
    "レビューお願いします",
    "デプロイ完了です",
    "テストが不安定です",
    "ランチ行く人？",
    "会議室どこですか",
];

/// Picks one of `from`.
trait Pick {
    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T;
}

impl Pick for Lcg {
    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len() as u64) as usize]
    }
}

/// What a generated thread is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Alludes to fact `n`.
    Allusion(usize),
    /// Talks shop after the facts are known: should recall none.
    Control,
}

/// The export, and what each scored thread (by its root's ts) is for.
struct Workspace {
    export: Export,
    scored: BTreeMap<String, Role>,
}

/// Writes the messages of the workspace in time order.
struct Writer {
    rng: Lcg,
    now: u64,
    count: usize,
    entries: Vec<Entry>,
    channels: Vec<ChannelId>,
    users: HashMap<&'static str, UserId>,
}

impl Writer {
    /// One message, 20 to 120 seconds after the last; returns its ts.
    fn say(&mut self, channel: usize, who: &str, text: &str, thread: Option<&str>) -> String {
        self.now += 20 + self.rng.below(100);
        self.count += 1;
        let ts = format!("{}.{:06}", self.now, self.count);
        let mut value = json!({"type": "message", "user": self.users[who], "ts": ts, "text": text});
        if let Some(root) = thread {
            value["thread_ts"] = json!(root);
        }
        self.entries.push(
            Entry::from_json(&self.channels[channel], value, "recall-bench").expect("an entry"),
        );
        ts
    }

    /// A quiet spell before the next conversation: 20 to 60 minutes.
    fn pause(&mut self) {
        self.now += 1_200 + self.rng.below(2_400);
    }

    fn someone_but(&mut self, who: &str) -> &'static str {
        loop {
            let other = *self.rng.pick(PEOPLE);
            if other != who {
                return other;
            }
        }
    }

    /// A few messages of shop talk, at the top level or in a new thread;
    /// the root's ts when in a thread.
    fn chatter(&mut self, channel: usize, threaded: bool) -> Option<String> {
        let n = 2 + self.rng.below(4);
        let first = *self.rng.pick(PEOPLE);
        let text = *self.rng.pick(CHATTER);
        let root = self.say(channel, first, text, None);
        for _ in 1..n {
            let who = *self.rng.pick(PEOPLE);
            let text = *self.rng.pick(CHATTER);
            self.say(channel, who, text, threaded.then_some(root.as_str()));
        }
        self.pause();
        threaded.then_some(root)
    }
}

fn workspace(seed: u64) -> Workspace {
    let channels = public_channels(CHANNELS.iter().copied());
    let users = people(PEOPLE.iter().map(|n| (*n).to_owned()));
    let mut w = Writer {
        rng: Lcg(seed),
        now: 1_767_603_600, // 2026-01-05 09:00 UTC
        count: 0,
        entries: Vec::new(),
        channels: channels.iter().map(|c| c.id.clone()).collect(),
        users: PEOPLE
            .iter()
            .copied()
            .zip(users.iter().map(|u| u.id.clone()))
            .collect(),
    };
    let channel_of = |n: usize| n % CHANNELS.len();

    // The facts, each in a quiet thread of its own, one or two bursts of
    // chatter between them.
    for (n, f) in FACTS.iter().enumerate() {
        let c = channel_of(n);
        let opener = w.someone_but(f.who);
        let opening = *w.rng.pick(OPENERS);
        let root = w.say(c, opener, opening, None);
        w.say(c, f.who, f.said, Some(&root));
        for _ in 0..2 {
            let other = w.someone_but(f.who);
            let nod = *w.rng.pick(NODS);
            w.say(c, other, nod, Some(&root));
        }
        let follow = *w.rng.pick(FOLLOW_UPS);
        w.say(c, f.who, follow, Some(&root));
        w.pause();
        for _ in 0..1 + w.rng.below(2) {
            let threaded = w.rng.below(2) == 0;
            let any = w.rng.below(CHANNELS.len() as u64) as usize;
            w.chatter(any, threaded);
        }
    }
    // A day off.
    w.now += 86_400;

    // The allusions, in another order, each in a thread of its own: half
    // open a thread, half come in a thread opened by shop talk; the person
    // answers in a word. Control threads of shop talk between them.
    let mut order: Vec<usize> = (0..FACTS.len()).collect();
    for i in (1..order.len()).rev() {
        let j = w.rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut scored = BTreeMap::new();
    for (k, &n) in order.iter().enumerate() {
        let f = &FACTS[n];
        let c = channel_of(n);
        let asker = w.someone_but(f.who);
        let root = if k % 2 == 0 {
            w.say(c, asker, f.allusion, None)
        } else {
            let opener = *w.rng.pick(PEOPLE);
            let opening = *w.rng.pick(CHATTER);
            let root = w.say(c, opener, opening, None);
            w.say(c, asker, f.allusion, Some(&root));
            root
        };
        let answer = *w.rng.pick(FOLLOW_UPS);
        w.say(c, f.who, answer, Some(&root));
        w.pause();
        scored.insert(canonical(&root), Role::Allusion(n));
        if k % 2 == 1 {
            let any = w.rng.below(CHANNELS.len() as u64) as usize;
            if let Some(root) = w.chatter(any, true) {
                scored.insert(canonical(&root), Role::Control);
            }
        }
    }
    Workspace {
        export: Export::new("generated facts", users, channels, w.entries),
        scored,
    }
}

/// A ts as the prompts write it.
fn canonical(ts: &str) -> String {
    Ts::parse(ts).expect("a ts").to_string()
}

/// What a prompt was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Reflection,
    Memory,
    Judgment,
    Response,
}

/// The scripted LLM: reflection extracts the facts stated in the messages
/// it is shown, judgment says yes, the rest is fixed text. It keeps the
/// judgment and response prompts and counts every call by kind.
#[derive(Default)]
struct Script {
    calls: Mutex<BTreeMap<Kind, u64>>,
    prompts: Mutex<Vec<(Kind, String)>>,
}

impl Script {
    /// The facts stated in a reflection prompt's numbered messages.
    fn extract(prompt: &str) -> String {
        let facts: Vec<_> = FACTS
            .iter()
            .enumerate()
            .filter_map(|(n, f)| {
                let at = prompt.find(f.said)?;
                // The number of the message that holds it: the last `[n] `
                // line above it.
                let line = prompt[..at].rfind("\n[")?;
                let number: u64 = prompt[line + 2..].split(']').next()?.parse().ok()?;
                Some(json!({
                    "subject": f.who, "fact": f.fact, "keywords": f.keywords,
                    "importance": 3 + (n % 2), "shareable": true, "sources": [number],
                }))
            })
            .collect();
        json!({ "facts": facts }).to_string()
    }
}

#[async_trait]
impl Llm for Script {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        let (kind, text) = match request.role {
            LlmRole::Memory if request.system.contains(DIGEST_MARK) => {
                // A digest writes the memories and extracts the facts in one
                // call: counted as a memory call.
                let facts: serde_json::Value =
                    serde_json::from_str(&Script::extract(&request.system)).expect("json");
                let answer = digest_answer(
                    &request.system,
                    "- the team talked about builds and news",
                    "- a thread about builds",
                    facts["facts"].clone(),
                );
                (Kind::Memory, answer)
            }
            LlmRole::Memory => (
                Kind::Memory,
                "- the team talked about builds and news".to_owned(),
            ),
            LlmRole::Judgment => (
                Kind::Judgment,
                json!({"should_respond": true, "response_type": "short", "emoji": null,
                       "reason": "bench", "confidence": 0.9, "delay_seconds": 0})
                .to_string(),
            ),
            LlmRole::Response => (Kind::Response, "にゃ、いいね".to_owned()),
        };
        *self.calls.lock().expect("lock").entry(kind).or_default() += 1;
        if matches!(kind, Kind::Judgment | Kind::Response) {
            self.prompts
                .lock()
                .expect("lock")
                .push((kind, request.system.clone()));
        }
        Ok(LlmReply {
            text,
            prompt_tokens: request.system.len() as u64 / 4,
            completion_tokens: 10,
            cached_tokens: 0,
        })
    }
}

/// The target thread of a judgment or response prompt (`None`: the top
/// level) and the facts of its "## 覚えていること" section.
fn read_prompt(kind: Kind, prompt: &str) -> (Option<String>, Vec<String>) {
    let marker = match kind {
        Kind::Judgment => "\n## 判定対象スレッド: ",
        _ => "\n#### スレッド: ",
    };
    let thread = prompt.find(marker).map(|at| {
        prompt[at + marker.len()..]
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned()
    });
    let facts = match prompt.find("\n## 覚えていること\n") {
        Some(at) => prompt[at..]
            .lines()
            .skip(2)
            .take_while(|l| !l.starts_with("## "))
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| without_provenance(l).to_owned())
            .collect(),
        None => Vec::new(),
    };
    (thread, facts)
}

/// A recalled fact's sentence without what the prompt adds after it: whom
/// it is about and who said it (「…（aliceのこと、bobが話した）」).
fn without_provenance(line: &str) -> &str {
    match line.rsplit_once('（') {
        Some((text, said)) if said.ends_with("が話した）") || said.ends_with("のこと）") => {
            text
        }
        _ => line,
    }
}

/// What one run measured.
struct Measured {
    messages: usize,
    calls: BTreeMap<Kind, u64>,
    /// Per alluding thread: the rank of the right fact (from 1) in its
    /// judgment prompt, if there; and what was recalled.
    allusions: Vec<(usize, Option<usize>, Vec<String>)>,
    /// Per control thread: the facts its judgment prompt got.
    controls: Vec<Vec<String>>,
    /// Alluding threads whose response prompt had the right fact, of those
    /// with a response prompt.
    responses: (usize, usize),
    /// The facts not in the store at the end.
    unlearnt: Vec<usize>,
}

fn run(ws: &Workspace, pairs: &[(&str, &str)]) -> Measured {
    let (settings, problems) = Settings::from_pairs(pairs.iter().copied());
    assert!(problems.is_empty(), "{problems:?}");
    let script = Arc::new(Script::default());
    let summary = replay_scripted(&ws.export, settings, script.clone());

    let mut first: BTreeMap<(Kind, String), Vec<String>> = BTreeMap::new();
    for (kind, prompt) in script.prompts.lock().expect("lock").iter() {
        if let (Some(thread), facts) = read_prompt(*kind, prompt) {
            first.entry((*kind, thread)).or_insert(facts);
        }
    }
    let mut allusions = Vec::new();
    let mut controls = Vec::new();
    let mut responses = (0, 0);
    for (root, role) in &ws.scored {
        let judged = first.get(&(Kind::Judgment, root.clone()));
        match role {
            Role::Allusion(n) => {
                let recalled = judged.cloned().unwrap_or_default();
                let rank = recalled.iter().position(|f| f == FACTS[*n].fact);
                allusions.push((*n, rank.map(|r| r + 1), recalled));
                if let Some(facts) = first.get(&(Kind::Response, root.clone())) {
                    responses.1 += 1;
                    if facts.iter().any(|f| f == FACTS[*n].fact) {
                        responses.0 += 1;
                    }
                }
            }
            Role::Control => controls.push(judged.cloned().unwrap_or_default()),
        }
    }
    let calls = script.calls.lock().expect("lock").clone();
    Measured {
        messages: summary.messages,
        calls,
        allusions,
        controls,
        responses,
        unlearnt: (0..FACTS.len())
            .filter(|n| !summary.learnt.iter().any(|(_, f)| f == FACTS[*n].fact))
            .collect(),
    }
}

fn per_100(calls: u64, messages: usize) -> f64 {
    100.0 * calls as f64 / messages.max(1) as f64
}

fn print_cost(label: &str, m: &Measured) {
    let of = |k| m.calls.get(&k).copied().unwrap_or(0);
    println!(
        "{label:<28} {:>10.1} {:>8.1} {:>9.1} {:>9.1} {:>7.1}",
        per_100(of(Kind::Reflection), m.messages),
        per_100(of(Kind::Memory), m.messages),
        per_100(of(Kind::Judgment), m.messages),
        per_100(of(Kind::Response), m.messages),
        per_100(m.calls.values().sum(), m.messages),
    );
}

fn main() {
    let ws = workspace(16);
    // Every conversation goes to the LLM, so that each has a prompt to
    // read; nothing holds the bot back between them.
    let recall_run = run(
        &ws,
        &[
            ("rule_thresholds", "-1000,1000"),
            ("cooldown_seconds", "0"),
            ("max_unprompted_per_channel_hour", "10000"),
            ("max_replies_per_channel_per_hour", "10000"),
            ("max_llm_calls_per_day", "1000000"),
        ],
    );
    let default_run = run(&ws, &[]);

    let m = &recall_run;
    let n = m.allusions.len();
    let at = |k: usize| {
        m.allusions
            .iter()
            .filter(|(_, r, _)| r.is_some_and(|r| r <= k))
            .count()
    };
    let japanese = |n: usize| !FACTS[n].said.is_ascii();
    let of_script = |ja: bool| {
        let all: Vec<_> = m
            .allusions
            .iter()
            .filter(|(f, _, _)| japanese(*f) == ja)
            .collect();
        let hit = all.iter().filter(|(_, r, _)| r.is_some()).count();
        (hit, all.len())
    };
    let false_recall = m.controls.iter().filter(|c| !c.is_empty()).count();
    let (en_hit, en) = of_script(false);
    let (ja_hit, ja) = of_script(true);

    println!();
    println!(
        "recall benchmark: {} messages, {} facts stated, {} learnt, {} alluding threads, {} control threads",
        m.messages,
        FACTS.len(),
        FACTS.len() - m.unlearnt.len(),
        n,
        m.controls.len()
    );
    println!();
    println!(
        "recall@1       {:>3}/{n}  {:.2}",
        at(1),
        at(1) as f64 / n as f64
    );
    println!(
        "recall@3       {:>3}/{n}  {:.2}",
        at(3),
        at(3) as f64 / n as f64
    );
    println!("  English      {en_hit:>3}/{en}");
    println!("  Japanese     {ja_hit:>3}/{ja}");
    println!(
        "  reply prompt {:>3}/{}  (the right fact in the response prompt too)",
        m.responses.0, m.responses.1
    );
    println!(
        "false recall   {false_recall:>3}/{}  {:.2}  (control threads given any fact)",
        m.controls.len(),
        false_recall as f64 / m.controls.len().max(1) as f64
    );
    println!();
    println!("LLM calls per 100 messages   reflection   memory  judgment  response   total");
    print_cost("every conversation judged", &recall_run);
    print_cost("default rule thresholds", &default_run);
    println!();
    for recalled in m.controls.iter().filter(|c| !c.is_empty()) {
        println!("control thread recalled: {recalled:?}");
    }
    for f in &m.unlearnt {
        println!("not learnt: {}", FACTS[*f].fact);
    }
    let misses: Vec<_> = m.allusions.iter().filter(|(_, r, _)| r.is_none()).collect();
    if !misses.is_empty() {
        println!("missed:");
        for (f, _, recalled) in misses {
            println!("  {:<60} <- {:?}", FACTS[*f].fact, FACTS[*f].allusion);
            for r in recalled {
                println!("      recalled instead: {r}");
            }
        }
    }
}
