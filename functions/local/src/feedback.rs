//! `myao feedback`: the hints people gave on the bot's posts, per channel,
//! each post with what the judge knew when it decided it, and the tuning
//! they come to; `myao feedback reset` takes a channel's hints back.
//!
//! It reads the store's labels and grounds only: no word of a message.

use std::io::Write;

use chrono::{DateTime, SecondsFormat, Utc};
use myao_core::ports::{ChannelRecords, LabelRecords, PortError};
use myao_domain::feedback::{channel_feedback, ChannelFeedback};
use myao_domain::hints::Hint;
use myao_domain::labels::Source;
use myao_domain::ChannelId;

/// The feedback of `channels`, or of every channel the store knows when
/// none is named; channels with no label and no tuning are left out of
/// the latter.
pub async fn report<S>(
    store: &S,
    channels: &[ChannelId],
    now: DateTime<Utc>,
) -> Result<Vec<ChannelFeedback>, PortError>
where
    S: LabelRecords + ChannelRecords + ?Sized,
{
    let named = !channels.is_empty();
    let channels: Vec<ChannelId> = match named {
        true => channels.to_vec(),
        false => {
            let mut known: Vec<ChannelId> = store
                .channels()
                .await?
                .into_iter()
                .map(|r| r.channel.id)
                .collect();
            known.sort();
            known
        }
    };
    let mut report = Vec::new();
    for channel in channels {
        let labels = store.labels(&channel).await?;
        if labels.is_empty() && !named {
            continue;
        }
        let grounds = store.grounds(&channel).await?;
        report.push(channel_feedback(&channel, &labels, &grounds, now));
    }
    Ok(report)
}

/// Takes back every hint given in `channel`: its tuning is the set level's
/// again, and a mute is over. Returns how many were taken back.
pub async fn reset<S>(store: &S, channel: &ChannelId) -> Result<usize, PortError>
where
    S: LabelRecords + ?Sized,
{
    let labels = store.labels(channel).await?;
    for label in &labels {
        store.delete_label(label).await?;
    }
    Ok(labels.len())
}

/// One line per channel whose hints tune it: `#C0123 tuned=+14 (3 hints on
/// 2 posts)`, with the mute while one holds; empty when none does.
pub fn tuning_lines(report: &[ChannelFeedback]) -> Vec<String> {
    report
        .iter()
        .filter(|c| c.offset != 0 || c.muted_until.is_some())
        .map(|c| {
            let hints: usize = c.posts.iter().map(|p| p.labels.len()).sum();
            format!(
                "#{} {} ({hints} hints on {} posts)",
                c.channel,
                c.tuning,
                c.posts.len()
            )
        })
        .collect()
}

/// The hints given in any channel of `store`, under a heading, as text;
/// nothing when none was (the local mode's own feedback, when `myao
/// serve` stops: its store goes with it).
pub async fn write_given<S>(
    out: &mut impl Write,
    store: &S,
    now: DateTime<Utc>,
) -> std::io::Result<()>
where
    S: LabelRecords + ChannelRecords + ?Sized,
{
    match report(store, &[], now).await {
        Ok(report) if report.is_empty() => Ok(()),
        Ok(report) => {
            writeln!(out, "hints given while serving:")?;
            write_text(out, &report)
        }
        Err(error) => writeln!(out, "the hints could not be read: {error}"),
    }
}

/// The report as text: per channel its tuning, then each labelled post
/// (newest first) with its balance and grounds, and its hints.
pub fn write_text(out: &mut impl Write, report: &[ChannelFeedback]) -> std::io::Result<()> {
    if report.is_empty() {
        return writeln!(out, "no hints given in any channel");
    }
    for channel in report {
        writeln!(
            out,
            "#{}  {}  ({} posts with hints)",
            channel.channel,
            channel.tuning,
            channel.posts.len()
        )?;
        for post in &channel.posts {
            let words = post.labels.iter().all(|l| l.source == Source::Words);
            let grounds = match &post.grounds {
                Some(grounds) => grounds.explain(),
                // Words to it are on the person's message, not on a post.
                None if words => "(words to it, on their message)".to_owned(),
                None => "(grounds not kept)".to_owned(),
            };
            writeln!(out, "  {}  {:+}  {grounds}", post.post, post.balance())?;
            for label in &post.labels {
                let hint = match label.hint {
                    Hint::Positive => "positive".to_owned(),
                    Hint::Negative => "negative".to_owned(),
                    Hint::Mute { minutes } => format!("mute {minutes} min"),
                };
                let how = match &label.source {
                    Source::Reaction(emoji) => format!(":{}:", emoji.as_str()),
                    Source::Words => "words".to_owned(),
                    Source::Button => "button".to_owned(),
                };
                writeln!(
                    out,
                    "    {hint:<10} {how:<16} {} {}",
                    label.user,
                    label.at.to_rfc3339_opts(SecondsFormat::Secs, true)
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use myao_core::adapters::system::ManualClock;
    use myao_core::adapters::twins::MemoryStore;
    use myao_domain::grounds::{Grounds, PostGrounds, Spoke};
    use myao_domain::labels::Label;
    use myao_domain::rules::Chattiness;
    use myao_domain::{EmojiName, Ts, UserId};

    fn label(channel: &str, post: &str, user: &str, hint: Hint, source: Source) -> Label {
        Label {
            channel: ChannelId::parse(channel).unwrap(),
            post: Ts::parse(post).unwrap(),
            user: UserId::parse(user).unwrap(),
            hint,
            source,
            at: DateTime::from_timestamp(1_767_600_100, 0).unwrap(),
        }
    }

    #[tokio::test]
    async fn the_report_reads_each_channels_hints_by_post_with_grounds_and_reset_takes_them_back() {
        let now = DateTime::from_timestamp(1_767_600_200, 0).unwrap();
        let store = MemoryStore::new(Arc::new(ManualClock::new(now)));
        let down = Source::Reaction(EmojiName::parse("-1").unwrap());
        let c1 = ChannelId::parse("C1").unwrap();
        store
            .put_label(&label(
                "C1",
                "1767600000.000100",
                "U1",
                Hint::Negative,
                down.clone(),
            ))
            .await
            .unwrap();
        store
            .put_label(&label(
                "C1",
                "1767600000.000100",
                "U2",
                Hint::Mute { minutes: 60 },
                Source::Words,
            ))
            .await
            .unwrap();
        store
            .put_label(&label(
                "C2",
                "1767600000.000300",
                "U1",
                Hint::Positive,
                Source::Button,
            ))
            .await
            .unwrap();
        store
            .put_grounds(&PostGrounds {
                channel: c1.clone(),
                post: Ts::parse("1767600000.000100").unwrap(),
                thread_ts: None,
                grounds: Grounds::unjudged(Spoke::Opening, Chattiness::Normal),
                at: now,
            })
            .await
            .unwrap();

        let both = [c1.clone(), ChannelId::parse("C2").unwrap()];
        let listed = report(&store, &both, now).await.unwrap();
        let mut text = Vec::new();
        write_text(&mut text, &listed).unwrap();
        let text = String::from_utf8(text).unwrap();
        insta::assert_snapshot!(text, @r"
        #C1  tuned=+14 muted_until=2026-01-05T09:01:40Z  (1 posts with hints)
          1767600000.000100  -2  opening normal
            negative   :-1:             U1 2026-01-05T08:01:40Z
            mute 60 min words            U2 2026-01-05T08:01:40Z
        #C2  tuned=-7  (1 posts with hints)
          1767600000.000300  +1  (grounds not kept)
            positive   button           U1 2026-01-05T08:01:40Z
        ");
        let json = serde_json::to_value(&listed).unwrap();
        assert_eq!(json[0]["posts"][0]["grounds"]["outcome"], "opening");
        assert_eq!(json[1]["offset"], -7);

        assert_eq!(
            tuning_lines(&listed),
            [
                "#C1 tuned=+14 muted_until=2026-01-05T09:01:40Z (2 hints on 1 posts)",
                "#C2 tuned=-7 (1 hints on 1 posts)"
            ]
        );
        // When serve stops: the channels the store knows, with hints.
        let mut given = Vec::new();
        write_given(&mut given, &store, now).await.unwrap();
        assert!(given.is_empty(), "no channel recorded, none listed");
        let record = |id: &ChannelId| myao_domain::Channel {
            id: id.clone(),
            name: "general".into(),
            visibility: myao_domain::Visibility::PUBLIC,
        };
        let until = now + chrono::Duration::days(1);
        store.touch_channel(&record(&c1), now, until).await.unwrap();
        write_given(&mut given, &store, now).await.unwrap();
        let given = String::from_utf8(given).unwrap();
        assert!(
            given.starts_with("hints given while serving:\n#C1  tuned=+14"),
            "{given}"
        );
        assert!(!given.contains("#C2"), "{given}");
        assert_eq!(reset(&store, &c1).await.unwrap(), 2);
        let after = report(&store, &both, now).await.unwrap();
        assert!(after[0].posts.is_empty());
        assert_eq!(after[0].tuning, "tuned=0", "the set level's again, unmuted");
        assert_eq!(tuning_lines(&after), ["#C2 tuned=-7 (1 hints on 1 posts)"]);
        assert_eq!(after[1].posts.len(), 1, "another channel's hints stay");
    }
}
