//! Reading a standard Slack workspace export: a folder, or its `.zip`.
//!
//! ```text
//! users.json                 [{"id", "name", "real_name", "profile": {...}, "is_bot"}]
//! channels.json              [{"id", "name", ...}]      (groups.json, mpims.json alike)
//! dms.json                   [{"id", "members"}]        (folders named by id)
//! <channel>/<YYYY-MM-DD>.json  [message, ...]
//! ```
//!
//! Each message is read with the live event parser
//! ([`myao_slack::event::parse_event`]) once its `channel` is set,
//! so subtypes, edits (`message_changed`) and deletions (`message_deleted`)
//! follow exactly the rules of the Events API. A file that is not what it
//! should be is an [`ExportError`] naming it; a message of a subtype the bot
//! ignores is kept as an ignored event, to be skipped and counted.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Days, NaiveDate, Utc};
use chrono_tz::Tz;
use myao_domain::text::UserNames;
use myao_domain::{Channel, ChannelId, EmojiName, IdError, TeamId, Ts, User, UserId, Visibility};
use myao_slack::event::{parse_event, EventParseError, Reaction, SlackEvent};
use serde_json::Value;

/// The most read of one file in a zip export (64 MiB uncompressed): a day
/// of a busy channel is a few MiB, and a zip bomb stops here.
pub const MAX_ZIP_ENTRY_BYTES: u64 = 64 << 20;

/// A file of the export that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {problem}")]
pub struct ExportError {
    /// The file, as the user can find it (`export.zip:general/2026-01-05.json`).
    pub file: String,
    pub problem: Problem,
}

impl ExportError {
    fn new(file: impl Into<String>, problem: impl Into<Problem>) -> ExportError {
        ExportError {
            file: file.into(),
            problem: problem.into(),
        }
    }
}

/// What is wrong with a file of the export.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    #[error("no such file or folder")]
    NotFound,
    #[error("cannot open: {0}")]
    Open(io::Error),
    #[error("neither a folder nor a readable zip archive of an export ({0})")]
    NotAnExport(zip::result::ZipError),
    #[error("cannot read: {0}")]
    Read(io::Error),
    #[error("cannot list: {0}")]
    List(io::Error),
    /// A file of a zip that inflates past `cap` bytes.
    #[error(
        "more than {} uncompressed, far more than a day of a channel; not read",
        size(*.cap)
    )]
    TooLarge { cap: u64 },
    /// A file every export has (`users.json`, `channels.json`).
    #[error("missing: a Slack export has one at its top")]
    Missing,
    #[error("not valid JSON: {0}")]
    NotJson(serde_json::Error),
    /// The file holds JSON of this kind (`an object`) instead of an array.
    #[error("expected a JSON array, found {0}")]
    NotAnArray(&'static str),
    /// Item `index` of a list file: `user 3`, `channel 0`.
    #[error("{what} {index}: {problem}")]
    Item {
        what: &'static str,
        index: usize,
        problem: ItemProblem,
    },
    /// `--channel` asked for a channel the export does not have.
    #[error("no channel named {wanted:?} (the export has: {})", .known.join(", "))]
    NoSuchChannel { wanted: String, known: Vec<String> },
    /// An entry of a day file (boxed: it is the largest problem by far).
    #[error(transparent)]
    Entry(Box<EntryError>),
}

impl From<EntryError> for Problem {
    fn from(e: EntryError) -> Problem {
        Problem::Entry(Box::new(e))
    }
}

/// What is wrong with one user or channel of a list file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ItemProblem {
    #[error("no \"{0}\"")]
    NoField(&'static str),
    #[error(transparent)]
    BadId(#[from] IdError),
    #[error("the name {0:?} is not a folder name")]
    NotAFolderName(String),
}

/// An entry of a day file that could not be read; `at` names it (`message 3`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("{at} is not a JSON object")]
    NotAnObject { at: String },
    #[error("{at} has no \"ts\"")]
    NoTs { at: String },
    #[error("{at}: {error}")]
    BadTs { at: String, error: IdError },
    /// The live event parser refused it.
    #[error("{at} (ts {ts}): {error}{}", .error.detail().map(|d| format!(": {d}")).unwrap_or_default())]
    Unreadable {
        at: String,
        ts: Ts,
        error: EventParseError,
    },
}

/// One entry of a day file: a message, an edit, a deletion, or something
/// the bot ignores.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub channel: ChannelId,
    /// When it happened: the entry's own `ts` (for an edit, the edit's time).
    pub ts: Ts,
    pub event: SlackEvent,
    /// The workspace it happened in, when the replay holds several
    /// ([`Export::of_teams`]); `None`: the stack's own.
    pub team: Option<TeamId>,
}

impl Entry {
    /// Reads one entry of `channel` from its JSON, as the live parser would
    /// read it from the Events API. `at` names it in errors.
    pub fn from_json(channel: &ChannelId, mut value: Value, at: &str) -> Result<Entry, EntryError> {
        let named = || at.to_owned();
        let Some(object) = value.as_object_mut() else {
            return Err(EntryError::NotAnObject { at: named() });
        };
        let ts = match object.get("ts").and_then(Value::as_str) {
            Some(ts) => Ts::parse(ts).map_err(|error| EntryError::BadTs { at: named(), error })?,
            None => return Err(EntryError::NoTs { at: named() }),
        };
        object.insert("channel".to_owned(), Value::String(channel.to_string()));
        if !object.contains_key("type") {
            // Some exporters leave it out; every entry of a day file is a message.
            object.insert("type".to_owned(), Value::String("message".to_owned()));
        }
        let event = parse_event(&value).map_err(|error| EntryError::Unreadable {
            at: named(),
            ts,
            error,
        })?;
        Ok(Entry {
            channel: channel.clone(),
            ts,
            event,
            team: None,
        })
    }

    /// The reactions an export keeps on a message (`reactions`: each
    /// emoji's name and who reacted), as `reaction_added` events right after
    /// it: the export holds no time for a reaction, so each is given at its
    /// message's. Ingest keeps those on the bot's posts that are hints as
    /// labels. Whatever is not a reaction it can read is left out.
    pub fn reactions_of(channel: &ChannelId, message: &Value) -> Vec<Entry> {
        let (Some(ts), Some(author), Some(reactions)) = (
            message
                .get("ts")
                .and_then(Value::as_str)
                .and_then(|t| Ts::parse(t).ok()),
            message
                .get("user")
                .and_then(Value::as_str)
                .and_then(|u| UserId::parse(u).ok()),
            message.get("reactions").and_then(Value::as_array),
        ) else {
            return Vec::new();
        };
        let mut entries = Vec::new();
        for reaction in reactions {
            let emoji = reaction
                .get("name")
                .and_then(Value::as_str)
                .map(|n| n.split("::").next().unwrap_or(n))
                .and_then(|n| EmojiName::parse(n).ok());
            let Some(emoji) = emoji else { continue };
            let users = reaction.get("users").and_then(Value::as_array);
            for user in users.into_iter().flatten() {
                let Some(user) = user.as_str().and_then(|u| UserId::parse(u).ok()) else {
                    continue;
                };
                entries.push(Entry {
                    channel: channel.clone(),
                    ts,
                    event: SlackEvent::Reaction(Reaction {
                        added: true,
                        user,
                        emoji: emoji.clone(),
                        channel: channel.clone(),
                        ts,
                        author: Some(author.clone()),
                    }),
                    team: None,
                });
            }
        }
        entries
    }

    /// When it happened.
    pub fn time(&self) -> DateTime<Utc> {
        self.ts.to_datetime()
    }
}

/// A workspace export in memory: who, where, and every entry in time order.
#[derive(Debug, Clone, Default)]
pub struct Export {
    /// Where it was read from (for the header of a replay).
    pub source: String,
    pub users: Vec<User>,
    pub channels: Vec<Channel>,
    /// In time order; entries of the same time keep their file order.
    pub entries: Vec<Entry>,
}

impl Export {
    /// An export built in code (tests, benchmarks): the entries are sorted.
    pub fn new(
        source: impl Into<String>,
        users: Vec<User>,
        channels: Vec<Channel>,
        mut entries: Vec<Entry>,
    ) -> Export {
        entries.sort_by_key(|e| e.ts);
        Export {
            source: source.into(),
            users,
            channels,
            entries,
        }
    }

    /// Several workspaces' exports as one replay of a stack installed in
    /// each: every entry carries its export's team, and the entries of all
    /// are in one time order (a tie keeps the exports' order).
    pub fn of_teams(parts: Vec<(TeamId, Export)>) -> Export {
        let mut merged = Export::default();
        let mut sources = Vec::new();
        let mut users = BTreeSet::new();
        let mut channels = BTreeSet::new();
        for (team, export) in parts {
            sources.push(format!("{} as {team}", export.source));
            for user in export.users {
                if users.insert(user.id.clone()) {
                    merged.users.push(user);
                }
            }
            for channel in export.channels {
                if channels.insert(channel.id.clone()) {
                    merged.channels.push(channel);
                }
            }
            merged
                .entries
                .extend(export.entries.into_iter().map(|mut e| {
                    e.team = Some(team.clone());
                    e
                }));
        }
        merged.entries.sort_by_key(|e| e.ts);
        merged.source = sources.join(" + ");
        merged
    }

    /// The workspaces of a replay of several ([`Export::of_teams`]), in
    /// their first entries' order; none for one workspace's export.
    pub fn teams(&self) -> Vec<TeamId> {
        let mut seen = Vec::new();
        for team in self.entries.iter().filter_map(|e| e.team.as_ref()) {
            if !seen.contains(team) {
                seen.push(team.clone());
            }
        }
        seen
    }
}

/// What to read of an export.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Channel names (with or without `#`) or ids; empty for all.
    pub channels: Vec<String>,
    /// The first and last day to include (inclusive), in `tz`.
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub tz: Option<Tz>,
}

impl Filter {
    fn day_of(&self, at: DateTime<Utc>) -> NaiveDate {
        match self.tz {
            Some(tz) => at.with_timezone(&tz).date_naive(),
            None => at.date_naive(),
        }
    }

    fn keeps_time(&self, at: DateTime<Utc>) -> bool {
        let day = self.day_of(at);
        self.from.is_none_or(|f| day >= f) && self.to.is_none_or(|t| day <= t)
    }

    /// Whether a day file can hold entries in range. Day files are named by
    /// UTC date; a zone moves a day by less than one either way.
    /// At the ends of the calendar (`NaiveDate::MIN`, `MAX`) the margin
    /// has no room and that side keeps everything.
    fn keeps_file_day(&self, day: NaiveDate) -> bool {
        let margin = Days::new(1);
        let after_from = self
            .from
            .and_then(|f| f.checked_sub_days(margin))
            .is_none_or(|f| day >= f);
        let before_to = self
            .to
            .and_then(|t| t.checked_add_days(margin))
            .is_none_or(|t| day <= t);
        after_from && before_to
    }
}

/// Reads all of `reader` if it holds at most `cap` bytes. A zip's
/// directory may lie about sizes: one byte past the cap is read to know,
/// never more.
fn read_capped(reader: impl Read, cap: u64, shown: &str) -> Result<Vec<u8>, ExportError> {
    let mut bytes = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ExportError::new(shown, Problem::Read(e)))?;
    if bytes.len() as u64 > cap {
        return Err(ExportError::new(shown, Problem::TooLarge { cap }));
    }
    Ok(bytes)
}

/// `64 MiB`, `512 bytes`.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// The files of an export, in a folder or a zip.
enum Files {
    Dir(PathBuf),
    Zip {
        path: String,
        archive: zip::ZipArchive<File>,
        /// The folder inside the zip that holds `channels.json` (often empty).
        prefix: String,
    },
}

impl Files {
    fn open(path: &Path) -> Result<Files, ExportError> {
        let shown = path.display().to_string();
        if path.is_dir() {
            return Ok(Files::Dir(path.to_path_buf()));
        }
        if !path.exists() {
            return Err(ExportError::new(shown, Problem::NotFound));
        }
        let opened = File::open(path)
            .map_err(Problem::Open)
            .and_then(|file| zip::ZipArchive::new(file).map_err(Problem::NotAnExport));
        let archive = match opened {
            Ok(archive) => archive,
            Err(problem) => return Err(ExportError::new(shown, problem)),
        };
        let prefix = archive
            .file_names()
            .filter(|n| *n == "channels.json" || n.ends_with("/channels.json"))
            .min_by_key(|n| n.len())
            .map(|n| n.trim_end_matches("channels.json").to_owned())
            .unwrap_or_default();
        Ok(Files::Zip {
            path: shown,
            archive,
            prefix,
        })
    }

    /// How the user finds `rel` (a path inside the export, `/`-separated).
    fn shown(&self, rel: &str) -> String {
        match self {
            Files::Dir(root) => root.join(rel).display().to_string(),
            Files::Zip { path, prefix, .. } => format!("{path}:{prefix}{rel}"),
        }
    }

    /// The contents of `rel`, `None` when it does not exist.
    fn read(&mut self, rel: &str) -> Result<Option<Vec<u8>>, ExportError> {
        let shown = self.shown(rel);
        let err = |e: io::Error| ExportError::new(shown.clone(), Problem::Read(e));
        match self {
            Files::Dir(root) => {
                let path = root.join(rel);
                if !path.is_file() {
                    return Ok(None);
                }
                std::fs::read(&path).map(Some).map_err(err)
            }
            Files::Zip {
                archive, prefix, ..
            } => {
                let name = format!("{prefix}{rel}");
                let mut file = match archive.by_name(&name) {
                    Ok(f) => f,
                    Err(zip::result::ZipError::FileNotFound) => return Ok(None),
                    Err(e) => return Err(err(io::Error::other(e))),
                };
                read_capped(&mut file, MAX_ZIP_ENTRY_BYTES, &shown).map(Some)
            }
        }
    }

    /// The names of the files directly in folder `dir`, sorted.
    fn list(&self, dir: &str) -> Result<Vec<String>, ExportError> {
        match self {
            Files::Dir(root) => {
                let path = root.join(dir);
                if !path.is_dir() {
                    return Ok(Vec::new());
                }
                let entries = std::fs::read_dir(&path)
                    .map_err(|e| ExportError::new(path.display().to_string(), Problem::List(e)))?;
                let mut names: Vec<String> = entries
                    .filter_map(Result::ok)
                    .filter(|e| e.path().is_file())
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect();
                names.sort();
                Ok(names)
            }
            Files::Zip {
                archive, prefix, ..
            } => {
                let folder = format!("{prefix}{dir}/");
                let names: BTreeSet<String> = archive
                    .file_names()
                    .filter_map(|n| n.strip_prefix(folder.as_str()))
                    .filter(|n| !n.is_empty() && !n.contains('/'))
                    .map(str::to_owned)
                    .collect();
                Ok(names.into_iter().collect())
            }
        }
    }
}

/// Reads a JSON file that must hold an array of objects.
fn read_array(
    files: &mut Files,
    rel: &str,
    required: bool,
) -> Result<Option<Vec<Value>>, ExportError> {
    let shown = files.shown(rel);
    let Some(bytes) = files.read(rel)? else {
        if required {
            return Err(ExportError::new(shown, Problem::Missing));
        }
        return Ok(None);
    };
    match serde_json::from_slice(&bytes) {
        Ok(Value::Array(items)) => Ok(Some(items)),
        Ok(other) => Err(ExportError::new(
            shown,
            Problem::NotAnArray(kind_of(&other)),
        )),
        Err(e) => Err(ExportError::new(shown, Problem::NotJson(e))),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The name people see, by the same preference as `users.info` in the
/// Slack adapter ([`UserNames::shown`]).
fn display_name(user: &Value) -> Option<String> {
    let at = |pointer: &str| user.pointer(pointer).and_then(Value::as_str);
    let names = UserNames {
        display_name: at("/profile/display_name"),
        profile_real_name: at("/profile/real_name"),
        real_name: at("/real_name"),
        handle: at("/name"),
    };
    names.shown().map(str::to_owned)
}

/// Reads every item of the list file `rel` (`users.json`, `channels.json`...)
/// with `read_item`; an item it refuses is named `{what} {index}`. A list
/// file that is not `required` and absent has no items.
fn read_items<T>(
    files: &mut Files,
    rel: &str,
    required: bool,
    what: &'static str,
    read_item: impl Fn(&Value) -> Result<T, ItemProblem>,
) -> Result<Vec<T>, ExportError> {
    let shown = files.shown(rel);
    let items = read_array(files, rel, required)?.unwrap_or_default();
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            read_item(item).map_err(|problem| {
                ExportError::new(
                    shown.clone(),
                    Problem::Item {
                        what,
                        index,
                        problem,
                    },
                )
            })
        })
        .collect()
}

/// A text field of a list item, `None` when absent.
fn text_field<'a>(item: &'a Value, name: &str) -> Option<&'a str> {
    item.get(name).and_then(Value::as_str)
}

/// The `"id"` of a list item, read by `parse`.
fn item_id<T>(item: &Value, parse: fn(&str) -> Result<T, IdError>) -> Result<T, ItemProblem> {
    let id = text_field(item, "id").ok_or(ItemProblem::NoField("id"))?;
    Ok(parse(id)?)
}

/// A user of `users.json`.
fn user(item: &Value) -> Result<User, ItemProblem> {
    let id = item_id(item, UserId::parse)?;
    let is_bot = item.get("is_bot").and_then(Value::as_bool).unwrap_or(false);
    Ok(User {
        name: display_name(item).unwrap_or_else(|| id.to_string()),
        id,
        is_bot,
    })
}

/// A channel of a list file and the folder of its messages: its name, or
/// its id when the file does not name its channels (`dms.json`);
/// `visibility` is who can read the channels that file lists.
fn channel(
    item: &Value,
    named: bool,
    visibility: Visibility,
) -> Result<(Channel, String), ItemProblem> {
    let id = item_id(item, ChannelId::parse)?;
    let name = if named {
        text_field(item, "name")
            .filter(|n| !n.trim().is_empty())
            .ok_or(ItemProblem::NoField("name"))?
            .to_owned()
    } else {
        id.to_string()
    };
    if name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(ItemProblem::NotAFolderName(name));
    }
    // Slack Connect channels say so; otherwise the file tells.
    let external = ["is_ext_shared", "is_pending_ext_shared"]
        .iter()
        .any(|f| item.get(*f).and_then(Value::as_bool).unwrap_or(false));
    let visibility = if external {
        visibility.shared_externally()
    } else {
        visibility
    };
    Ok((
        Channel {
            id,
            name: name.clone(),
            visibility,
        },
        name,
    ))
}

/// The channels of one list file, each with the folder of its messages.
fn channel_list(
    files: &mut Files,
    rel: &str,
    required: bool,
    named: bool,
    visibility: Visibility,
) -> Result<Vec<(Channel, String)>, ExportError> {
    read_items(files, rel, required, "channel", |item| {
        channel(item, named, visibility)
    })
}

/// Reads the export at `path` (a folder or a `.zip`), keeping what `filter` asks for.
pub fn read(path: &Path, filter: &Filter) -> Result<Export, ExportError> {
    let mut files = Files::open(path)?;
    let users = read_items(&mut files, "users.json", true, "user", user)?;
    // Public channels, private ones, group DMs and DMs each have their file.
    let mut channels = channel_list(&mut files, "channels.json", true, true, Visibility::PUBLIC)?;
    channels.extend(channel_list(
        &mut files,
        "groups.json",
        false,
        true,
        Visibility::PRIVATE,
    )?);
    channels.extend(channel_list(
        &mut files,
        "mpims.json",
        false,
        true,
        Visibility::DIRECT,
    )?);
    channels.extend(channel_list(
        &mut files,
        "dms.json",
        false,
        false,
        Visibility::DIRECT,
    )?);

    if !filter.channels.is_empty() {
        let wanted: Vec<&str> = filter
            .channels
            .iter()
            .map(|c| c.trim_start_matches('#'))
            .collect();
        for w in &wanted {
            if !channels
                .iter()
                .any(|(c, _)| c.name == *w || c.id.as_str() == *w)
            {
                let known = channels.iter().map(|(c, _)| c.name.clone()).collect();
                return Err(ExportError::new(
                    files.shown("channels.json"),
                    Problem::NoSuchChannel {
                        wanted: (*w).to_owned(),
                        known,
                    },
                ));
            }
        }
        channels.retain(|(c, _)| wanted.iter().any(|w| c.name == *w || c.id.as_str() == *w));
    }

    let mut entries = Vec::new();
    for (channel, folder) in &channels {
        for name in files.list(folder)? {
            let Some(day) = name
                .strip_suffix(".json")
                .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
            else {
                continue; // not a day file
            };
            if !filter.keeps_file_day(day) {
                continue;
            }
            let rel = format!("{folder}/{name}");
            let shown = files.shown(&rel);
            let items = read_array(&mut files, &rel, true)?.unwrap_or_default();
            for (i, item) in items.into_iter().enumerate() {
                let reactions = Entry::reactions_of(&channel.id, &item);
                let entry = Entry::from_json(&channel.id, item, &format!("message {i}"))
                    .map_err(|e| ExportError::new(shown.clone(), e))?;
                if filter.keeps_time(entry.time()) {
                    entries.push(entry);
                    entries.extend(reactions);
                }
            }
        }
    }
    Ok(Export::new(
        path.display().to_string(),
        users,
        channels.into_iter().map(|(c, _)| c).collect(),
        entries,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_stops_one_byte_past_the_cap_and_names_the_file() {
        let shown = "export.zip:general/2026-01-05.json";
        assert_eq!(read_capped(&b"[1234]"[..], 6, shown).unwrap(), b"[1234]");
        let e = read_capped(&b"[12345]"[..], 6, shown).unwrap_err();
        assert_eq!(e.file, shown);
        assert!(e.to_string().contains("more than 6 bytes"), "{e}");
        // An endless entry is not read to its end.
        let e = read_capped(std::io::repeat(b' '), 1 << 20, shown).unwrap_err();
        assert!(e.to_string().contains("more than 1 MiB"), "{e}");
    }

    #[test]
    fn dates_at_the_ends_of_the_calendar_filter_without_overflow() {
        let day = NaiveDate::from_ymd_opt(2026, 1, 5).unwrap();
        let ends = Filter {
            from: Some(NaiveDate::MIN),
            to: Some(NaiveDate::MAX),
            ..Filter::default()
        };
        assert!(ends.keeps_file_day(day));
        assert!(ends.keeps_file_day(NaiveDate::MIN));
        assert!(ends.keeps_file_day(NaiveDate::MAX));
        assert!(ends.keeps_time(day.and_hms_opt(9, 0, 0).unwrap().and_utc()));
        let after = Filter {
            from: Some(NaiveDate::MAX),
            ..Filter::default()
        };
        assert!(!after.keeps_file_day(day));
        let before = Filter {
            to: Some(NaiveDate::MIN),
            tz: Some(chrono_tz::Asia::Tokyo),
            ..Filter::default()
        };
        assert!(!before.keeps_file_day(day));
        assert!(!before.keeps_time(day.and_hms_opt(9, 0, 0).unwrap().and_utc()));
    }
}
