//! The Japanese rules: a phrase closing its clause, after few words.

use chrono::Weekday;

use super::heard::{Heard, Sense};
use super::mute::RestOfDay;

/// A Japanese clause: leads, a phrase, and only endings after it. `today`:
/// what is left of the workspace's day.
pub(super) fn japanese(clause: &str, today: RestOfDay) -> Heard {
    let text: String = clause.chars().filter(|c| !c.is_whitespace()).collect();
    // 「教えてくれてありがとう」: a thanks for something done.
    for done in ["くれて", "もらって", "くださって", "いただいて"] {
        if let Some((_, rest)) = text.rsplit_once(done) {
            if let heard @ Heard::Hint(Sense::Positive, _) = japanese_from(rest, today) {
                return heard;
            }
        }
    }
    japanese_from(&text, today)
}

fn japanese_from(text: &str, today: RestOfDay) -> Heard {
    let mut minutes = None;
    let mut rest = text;
    while !rest.is_empty() {
        if let Some((sense, phrase)) = longest(rest, JAPANESE) {
            let tail = strip_all(&rest[phrase.len()..], JA_ENDINGS);
            return if tail.is_empty() {
                Heard::Hint(sense, minutes)
            } else {
                Heard::Nothing
            };
        }
        if let Some((m, len)) = japanese_duration(rest, today) {
            minutes = minutes.or(Some(m));
            rest = &rest[len..];
        } else if let Some(lead) = JA_LEADS.iter().find(|l| rest.starts_with(*l)) {
            rest = &rest[lead.len()..];
        } else {
            return Heard::Nothing;
        }
    }
    minutes.map_or(Heard::Nothing, Heard::Duration)
}

/// The longest phrase of `table` that `text` opens with.
fn longest(text: &str, table: &[(Sense, &[&'static str])]) -> Option<(Sense, &'static str)> {
    table
        .iter()
        .flat_map(|(sense, phrases)| phrases.iter().map(move |p| (*sense, *p)))
        .filter(|(_, p)| text.starts_with(p))
        .max_by_key(|(_, p)| p.len())
}

/// `text` with every leading word of `list` taken off, longest first.
fn strip_all<'a>(mut text: &'a str, list: &[&str]) -> &'a str {
    while let Some(word) = list
        .iter()
        .filter(|w| text.starts_with(*w))
        .max_by_key(|w| w.len())
    {
        text = &text[word.len()..];
    }
    text
}

/// The rest of the day, said (「今日は」「明日まで」), longest first where one
/// opens another; 「明日の朝まで」 lasts until nine then.
const JA_REST_OF_DAY: &[(&str, u32)] = &[
    ("明日の朝まで", 9 * 60),
    ("あしたの朝まで", 9 * 60),
    ("明日まで", 0),
    ("あしたまで", 0),
    ("今日いっぱい", 0),
    ("今日一日", 0),
    ("今日中", 0),
    ("今日", 0),
    ("きょう", 0),
    ("今夜", 0),
];

/// Until the weekend or the week is over (「週末は」「今週いっぱい」
/// 「来週まで」): until Monday begins; 「週末まで」: until Saturday. Longest
/// first where one opens another.
const JA_TO_A_DAY: &[(&str, Weekday)] = &[
    ("今週末まで", Weekday::Sat),
    ("今週末", Weekday::Mon),
    ("週末まで", Weekday::Sat),
    ("週明けまで", Weekday::Mon),
    ("週末の間", Weekday::Mon),
    ("週末いっぱい", Weekday::Mon),
    ("週末", Weekday::Mon),
    ("土日の間", Weekday::Mon),
    ("土日", Weekday::Mon),
    ("今週いっぱい", Weekday::Mon),
    ("今週中", Weekday::Mon),
    ("今週", Weekday::Mon),
    ("来週まで", Weekday::Mon),
];

/// 「月曜まで」「金曜日まで」「来週の月曜まで」「月曜の朝まで」 (until nine
/// then): the minutes until that day, and the length in bytes.
fn japanese_until_a_day(text: &str, today: RestOfDay) -> Option<(u32, usize)> {
    if let Some((said, day)) = JA_TO_A_DAY.iter().find(|(p, _)| text.starts_with(p)) {
        return Some((today.until(*day), said.len()));
    }
    let rest = strip_all(text, &["来週の", "次の"]);
    let next = rest.len() < text.len();
    let mut chars = rest.chars();
    let day = match chars.next()? {
        '月' => Weekday::Mon,
        '火' => Weekday::Tue,
        '水' => Weekday::Wed,
        '木' => Weekday::Thu,
        '金' => Weekday::Fri,
        '土' => Weekday::Sat,
        '日' => Weekday::Sun,
        _ => return None,
    };
    let after = chars.as_str();
    let after = after
        .strip_prefix("曜日")
        .or_else(|| after.strip_prefix("曜"))?;
    let (more, end) = if let Some(end) = after.strip_prefix("の朝まで") {
        (9 * 60, end)
    } else {
        (0, after.strip_prefix("まで")?)
    };
    let until = if next {
        today.until_next(day)
    } else {
        today.until(day)
    };
    Some((until.saturating_add(more), text.len() - end.len()))
}

/// A Japanese duration `text` opens with (「1時間」「30分」「一時間半」「半日」
/// 「1週間」「今日は」「月曜まで」), in minutes, and its length in bytes.
/// `today`: what is left of the workspace's day.
fn japanese_duration(text: &str, today: RestOfDay) -> Option<(u32, usize)> {
    let (minutes, len) = if let Some(rest) = text.strip_prefix("半日") {
        (12 * 60, text.len() - rest.len())
    } else if let Some(until) = japanese_until_a_day(text, today) {
        until
    } else if let Some((said, more)) = JA_REST_OF_DAY.iter().find(|(p, _)| text.starts_with(p)) {
        (today.left().saturating_add(*more), said.len())
    } else {
        let (n, digits) = japanese_number(text)?;
        let rest = &text[digits..];
        if let Some(after) = rest.strip_prefix("時間") {
            let half = after.starts_with('半');
            let extra = if half { 30 } else { 0 };
            let used = digits + "時間".len() + if half { '半'.len_utf8() } else { 0 };
            (n.saturating_mul(60).saturating_add(extra), used)
        } else if let Some((unit, per)) = JA_UNITS.iter().find(|(u, _)| rest.starts_with(u)) {
            let used = digits + unit.len();
            let used = used
                + if text[used..].starts_with('間') {
                    '間'.len_utf8()
                } else {
                    0
                };
            (n.saturating_mul(*per), used)
        } else {
            return None;
        }
    };
    let after = strip_all(
        &text[len..],
        &["くらい", "ぐらい", "ほど", "だけ", "の間", "は"],
    );
    Some((minutes, text.len() - after.len()))
}

/// Units after a number, in minutes (「間」 may follow: 「30分間」「1週間」).
const JA_UNITS: &[(&str, u32)] = &[
    ("分", 1),
    ("日", 24 * 60),
    ("週", 7 * 24 * 60),
    ("ヶ月", 30 * 24 * 60),
    ("ケ月", 30 * 24 * 60),
    ("か月", 30 * 24 * 60),
    ("カ月", 30 * 24 * 60),
    ("ヵ月", 30 * 24 * 60),
    ("箇月", 30 * 24 * 60),
    ("年", 365 * 24 * 60),
];

/// A number in digits (ASCII or full-width) or in kanji up to 99
/// (「三十」「十五」), and its length in bytes.
fn japanese_number(text: &str) -> Option<(u32, usize)> {
    let digit = |c: char| match c {
        '0'..='9' => c.to_digit(10),
        '０'..='９' => Some(u32::from(c) - u32::from('０')),
        _ => None,
    };
    let kanji = |c: char| "〇一二三四五六七八九".chars().position(|k| k == c);
    let mut n: u32 = 0;
    let mut len = 0;
    for c in text.chars().take_while(|c| digit(*c).is_some()) {
        n = n.saturating_mul(10).saturating_add(digit(c).unwrap_or(0));
        len += c.len_utf8();
    }
    if len > 0 {
        return Some((n, len));
    }
    let mut chars = text.chars().peekable();
    let mut tens = None;
    let mut ones = 0;
    while let Some(&c) = chars.peek() {
        if c == '十' {
            tens = Some(if ones == 0 { 1 } else { ones });
            ones = 0;
        } else if let Some(k) = kanji(c) {
            ones = u32::try_from(k).ok()?;
        } else {
            break;
        }
        len += c.len_utf8();
        chars.next();
    }
    (len > 0).then(|| (tens.unwrap_or(0) * 10 + ones, len))
}

/// The Japanese phrases, each closing its clause.
const JAPANESE: &[(Sense, &[&str])] = &[
    (
        Sense::Mute,
        &[
            "静かに",
            "しずかに",
            "黙って",
            "黙れ",
            "だまって",
            "だまれ",
            "黙っといて",
            "うるさい",
            "うるせえ",
            "うるせー",
            "うっさい",
            "今はいい",
            "いまはいい",
            "今はいらない",
            "今じゃない",
            "今はやめて",
            "やめて",
            "しーっ",
            "シーッ",
            "話しかけないで",
            "口を挟まないで",
            "口出ししないで",
            "出てこないで",
            "引っ込んで",
            "あっち行って",
            "ミュート",
        ],
    ),
    (
        Sense::Negative,
        &[
            "しゃべりすぎ",
            "喋りすぎ",
            "話しすぎ",
            "出しゃばりすぎ",
            "出しゃばらないで",
            "呼んでない",
            "お呼びでない",
            "余計なお世話",
            "誰も聞いてない",
            "空気読んで",
            "空気読め",
            "役に立たない",
        ],
    ),
    (
        Sense::Positive,
        &[
            "ありがとう",
            "ありがと",
            "あざす",
            "あざっす",
            "あざーす",
            "サンキュー",
            "サンキュ",
            "さんきゅ",
            "感謝",
            "助かった",
            "助かる",
            "助かります",
            "助かりました",
            "それだ",
            "それそれ",
            "さすが",
            "完璧",
            "天才",
            "ナイス",
            "グッジョブ",
            "最高",
            // A mute lifted: 「もう話していいよ」.
            "話していい",
            "話してもいい",
            "話して大丈夫",
            "しゃべっていい",
            "しゃべってもいい",
            "喋っていい",
            "喋ってもいい",
            "戻ってきていい",
            "戻ってきて",
            "ミュート解除",
        ],
    ),
];

/// Words before a Japanese phrase that leave it the clause's point.
const JA_LEADS: &[&str] = &[
    "ちょっと",
    "もう",
    "少し",
    "しばらく",
    "一旦",
    "いったん",
    "ほんとに",
    "ほんと",
    "本当に",
    "マジで",
    "まじで",
    "めっちゃ",
    "すごく",
    "とても",
    "超",
    "いつも",
    "ねえ",
    "ねぇ",
    "おい",
    "あのさ",
    "あの",
    "ごめんね",
    "ごめん",
    "悪いけど",
    "わるいけど",
    "お願いだから",
    "お願い",
    "頼むから",
    "でも",
    "じゃあ",
    "うん",
    "はい",
    "いや",
    "ここでは",
    "ここは",
    "このチャンネルでは",
    "ok",
    "ー",
    "〜",
    "~",
    "さん",
    "ちゃん",
    "くん",
];

/// What may close a Japanese phrase: requests, politeness, particles, marks
/// and laughter; not 「た」 (「黙ってた」 is a story) nor a quote's 「言われた」.
const JA_ENDINGS: &[&str] = &[
    "て",
    "てて",
    "ね",
    "よ",
    "な",
    "なあ",
    "ってば",
    "って",
    "ください",
    "下さい",
    "くれ",
    "くれる",
    "くれない",
    "くれません",
    "ほしい",
    "欲しい",
    "です",
    "ます",
    "ございます",
    "ございました",
    "ました",
    "して",
    "しといて",
    "しておいて",
    "しろ",
    "かな",
    "お願い",
    "おねがい",
    "や",
    "わ",
    "ぞ",
    "ー",
    "〜",
    "~",
    "ぇ",
    "ぁ",
    "あ",
    "っ",
    "w",
    "ｗ",
    "笑",
    "♪",
    "!",
    "！",
    "だ",
];
