use super::*;

#[test]
fn defaults_are_the_documented_ones() {
    let s = Settings::default();
    assert_eq!(s.min_wait_seconds, 300);
    assert_eq!(s.jitter_ratio, 0.3);
    assert_eq!(s.channel_messages_limit, 50);
    assert_eq!(s.active_channel_days, 7);
    assert_eq!(s.thread_memory_days, 7);
    assert_eq!(s.message_limit, 20);
    assert_eq!(s.max_message_age_seconds, 43_200);
    assert_eq!(s.long_term_update_interval_seconds, 86_400);
    assert_eq!(s.short_term_window_hours, 24);
    assert_eq!(s.long_term_max_tokens, 500);
    assert_eq!(s.short_term_max_tokens, 300);
    assert_eq!((s.response_temperature, s.response_max_tokens), (0.7, 1000));
    assert_eq!((s.judgment_temperature, s.judgment_max_tokens), (0.3, 500));
    assert_eq!((s.memory_temperature, s.memory_max_tokens), (0.5, 4_000));
    assert_eq!(s.timezone, Tz::UTC);
}

#[test]
fn a_present_value_overrides_its_default() {
    let (s, issues) = Settings::from_pairs([("min_wait_seconds", "30"), ("jitter_ratio", "0")]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(s.min_wait_seconds, 30);
    assert_eq!(s.jitter_ratio, 0.0);
}

#[test]
fn malformed_and_out_of_range_values_keep_the_default_and_are_reported() {
    let (s, issues) = Settings::from_pairs([
        ("min_wait_seconds", "five minutes"),
        ("jitter_ratio", "1.5"),
        ("timezone", "Mars/Olympus"),
        ("llm_base_url", "ftp://x"),
        ("no_such_setting", "1"),
    ]);
    assert_eq!(s, Settings::default());
    let names: Vec<_> = issues.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "min_wait_seconds",
            "jitter_ratio",
            "timezone",
            "llm_base_url",
            "no_such_setting"
        ]
    );
    assert!(issues[0].to_string().contains("not a whole number"));
    assert!(issues[1].to_string().contains("out of range"));
}

#[test]
fn a_refused_value_says_what_is_wrong() {
    use SettingError::*;
    let mut s = Settings::default();
    let cases = [
        ("no_such_setting", "1", UnknownName),
        ("min_wait_seconds", "soon", NotAWholeNumber),
        (
            "min_wait_seconds",
            "-5",
            WholeNumberOutOfRange {
                min: 0,
                max: 86_400,
            },
        ),
        (
            "min_wait_seconds",
            "99999999999",
            WholeNumberOutOfRange {
                min: 0,
                max: 86_400,
            },
        ),
        (
            "min_wait_seconds",
            "100000",
            WholeNumberOutOfRange {
                min: 0,
                max: 86_400,
            },
        ),
        ("jitter_ratio", "much", NotANumber),
        (
            "jitter_ratio",
            "1.5",
            NumberOutOfRange { min: 0.0, max: 1.0 },
        ),
        ("persona_name", "  ", Empty),
        ("llm_base_url", "ftp://x", NotAnHttpUrl),
        ("slack_app_id", "a-1", NotASlackId),
        ("slack_app_id", "T0123", WrongSlackIdKind { first: 'A' }),
        ("limit_notice", "maybe", NotABoolean),
        ("timezone", "Mars/Olympus", NotATimeZone),
    ];
    for (name, value, error) in cases {
        assert_eq!(s.apply(name, value), Err(error), "{name} = {value:?}");
    }
    assert!(matches!(s.apply("bot_user_id", "U 1"), Err(BadUserId(_))));
    assert_eq!(s, Settings::default(), "nothing was applied");
    assert_eq!(
        WholeNumberOutOfRange {
            min: 0,
            max: 86_400
        }
        .to_string(),
        "out of range 0..=86400"
    );
    assert_eq!(
        WrongSlackIdKind { first: 'T' }.to_string(),
        "not a Slack id starting with T"
    );
}

#[test]
fn the_value_of_an_unknown_name_is_never_repeated() {
    let (_, issues) = Settings::from_pairs([("slack_bot_tokn", "bot-token-123-secret")]);
    assert_eq!(issues.len(), 1);
    assert!(!issues[0].to_string().contains("secret"), "{}", issues[0]);
}

#[test]
fn a_wait_longer_than_the_age_limit_is_refused() {
    let (s, issues) = Settings::from_pairs([("min_wait_seconds", "50000")]);
    assert_eq!(s.min_wait_seconds, 300);
    assert_eq!(issues.len(), 1);
    assert!(issues[0].problem.contains("max_message_age_seconds"));
    let (s, issues) = Settings::from_pairs([
        ("min_wait_seconds", "600"),
        ("max_message_age_seconds", "3600"),
    ]);
    assert!(issues.is_empty());
    assert_eq!((s.min_wait_seconds, s.max_message_age_seconds), (600, 3600));
}

#[test]
fn calls_that_cannot_fit_the_function_timeouts_are_refused() {
    let d = Settings::default();
    let shortest = JUDGMENT_FUNCTION_TIMEOUT_SECONDS.min(RESPONSE_FUNCTION_TIMEOUT_SECONDS);
    assert!(
        d.worst_case_call_seconds() + u64::from(JOB_MARGIN_SECONDS) <= u64::from(shortest),
        "the defaults fit"
    );
    // 60 s x 3 LLM attempts alone fill the functions' 180 s.
    let (s, issues) = Settings::from_pairs([
        ("llm_timeout_seconds", "60"),
        ("llm_max_retries", "2"),
        ("slack_max_retries", "5"),
    ]);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].name, "llm_timeout_seconds");
    assert!(
        issues[0]
            .problem
            .contains("judgment function's 180 s timeout"),
        "{}",
        issues[0]
    );
    assert_eq!(
        (
            s.llm_timeout_seconds,
            s.llm_max_retries,
            s.slack_max_retries
        ),
        (
            d.llm_timeout_seconds,
            d.llm_max_retries,
            d.slack_max_retries
        ),
        "the three reset"
    );
    // A long timeout without retries fits: 120 + 10 x 4 + 10 = 170 s.
    let (s, issues) =
        Settings::from_pairs([("llm_timeout_seconds", "120"), ("llm_max_retries", "0")]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!((s.llm_timeout_seconds, s.llm_max_retries), (120, 0));
    // Slack's attempts count too: 120 + 10 x 6 + 10 = 190 s.
    let (s, issues) = Settings::from_pairs([
        ("llm_timeout_seconds", "120"),
        ("llm_max_retries", "0"),
        ("slack_max_retries", "5"),
    ]);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(s.slack_max_retries, d.slack_max_retries);
}

#[test]
fn a_mention_may_be_answered_for_twenty_minutes_by_default() {
    // One SQS redelivery (visibility timeout 1,080 s) fits.
    assert!(Settings::default().mention_max_age_seconds > 1_080);
    let (s, issues) = Settings::from_pairs([("retry_delays_seconds", " 5, 20 ,60")]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(s.retry_delays_seconds, vec![5, 20, 60]);
    let (s, issues) = Settings::from_pairs([("retry_delays_seconds", "")]);
    assert!(issues.is_empty(), "{issues:?}");
    assert!(
        s.retry_delays_seconds.is_empty(),
        "blank: the queue's own only"
    );
    for bad in ["10,soon", "-5", "50000", "1,1,1,1,1,1,1,1,1,1,1"] {
        let (s, issues) = Settings::from_pairs([("retry_delays_seconds", bad)]);
        assert_eq!(issues.len(), 1, "{bad}");
        assert_eq!(
            s.retry_delays_seconds,
            vec![10, 30, 90, 240, 600],
            "{bad}: the default stays"
        );
    }
    let (s, issues) = Settings::from_pairs([("mention_max_age_seconds", "900")]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(s.mention_max_age_seconds, 900);
    let (s, issues) = Settings::from_pairs([("mention_max_age_seconds", "10")]);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(s.mention_max_age_seconds, 1_200);
}

#[test]
fn default_pairs_round_trip_to_the_defaults() {
    let pairs = Settings::default_pairs();
    let (s, issues) = Settings::from_pairs(pairs.iter().map(|(n, v)| (*n, v.as_str())));
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(s, Settings::default());
    for (name, _) in &pairs {
        assert!(SETTING_NAMES.contains(name), "{name} is not listed");
    }
    assert_eq!(
        pairs.len() + 12,
        SETTING_NAMES.len(),
        "only bot_user_id, slack_app_id, slack_team_id, slack_client_id, name_aliases, \
         channel_chattiness, rule_thresholds, interest_keywords, proactive_channels and the \
         three roles' providers have no default"
    );
}

#[test]
fn time_zone_and_urls_are_normalised() {
    let (s, issues) = Settings::from_pairs([
        ("timezone", "Asia/Tokyo"),
        ("llm_base_url", "http://127.0.0.1:9/v1/"),
    ]);
    assert!(issues.is_empty());
    assert_eq!(s.timezone, chrono_tz::Asia::Tokyo);
    assert_eq!(s.llm_base_url, "http://127.0.0.1:9/v1");
}

#[test]
fn app_and_team_ids_are_optional_slack_ids() {
    let d = Settings::default();
    assert_eq!((d.slack_app_id, d.slack_team_id), (None, None));
    let (s, issues) =
        Settings::from_pairs([("slack_app_id", " A0123ABC "), ("slack_team_id", "T0123\n")]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(s.slack_app_id.as_deref(), Some("A0123ABC"));
    assert_eq!(s.slack_team_id.as_deref(), Some("T0123"));
    let (s, issues) = Settings::from_pairs([
        ("slack_app_id", "T0123"),
        ("slack_team_id", "t0123"),
        ("slack_app_id", "A-1"),
    ]);
    assert_eq!(issues.len(), 3, "{issues:?}");
    assert_eq!((s.slack_app_id, s.slack_team_id), (None, None));
    // Blank is none, as for every optional setting (`MYAO_SLACK_TEAM_ID=`).
    let (s, issues) = Settings::from_pairs([("slack_team_id", "T0123"), ("slack_team_id", " ")]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(s.slack_team_id, None);
}

#[test]
fn spend_limits_have_high_defaults_and_refuse_zero() {
    let d = Settings::default();
    assert_eq!(d.max_replies_per_channel_per_hour, 30);
    assert_eq!(d.max_mentions_per_user_per_hour, 20);
    assert_eq!(d.max_llm_calls_per_day, 2_000);
    assert!(d.limit_notice);
    let (s, issues) = Settings::from_pairs([
        ("max_replies_per_channel_per_hour", "5"),
        ("max_mentions_per_user_per_hour", "3"),
        ("max_llm_calls_per_day", "100"),
        ("limit_notice", "false"),
    ]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(
        (
            s.max_replies_per_channel_per_hour,
            s.max_mentions_per_user_per_hour,
            s.max_llm_calls_per_day,
            s.limit_notice
        ),
        (5, 3, 100, false)
    );
    // Zero would silence the bot for good: a typo must not do that.
    let (s, issues) = Settings::from_pairs([
        ("max_replies_per_channel_per_hour", "0"),
        ("max_mentions_per_user_per_hour", "-1"),
        ("max_llm_calls_per_day", "0"),
        ("limit_notice", "maybe"),
    ]);
    assert_eq!(issues.len(), 4, "{issues:?}");
    assert_eq!(s, Settings::default());
}

#[test]
fn the_chattiness_dial_its_channel_overrides_and_its_older_name() {
    let c1 = ChannelId::parse("C1").unwrap();
    let c2 = ChannelId::parse("C2").unwrap();
    let (s, issues) = Settings::from_pairs([
        ("chattiness", "quiet"),
        ("channel_chattiness", "C1=chatty, C9=mentions_only"),
    ]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(s.chattiness_in(&c1), Chattiness::Chatty);
    assert_eq!(s.chattiness_in(&c2), Chattiness::Quiet);
    assert_eq!(s.thresholds_in(&c2), Chattiness::Quiet.thresholds());
    // `autonomous_replies = false` is mentions only, but for channels
    // with a level of their own.
    let (s, _) = Settings::from_pairs([
        ("autonomous_replies", "false"),
        ("channel_chattiness", "C1=normal"),
    ]);
    assert_eq!(s.chattiness_in(&c2), Chattiness::MentionsOnly);
    assert_eq!(s.thresholds_in(&c2), None);
    assert_eq!(s.chattiness_in(&c1), Chattiness::Normal);
    // Thresholds of one's own replace the level's, not mentions only.
    let (s, _) = Settings::from_pairs([("rule_thresholds", "10, 40")]);
    assert_eq!(s.thresholds_in(&c2), Some(Thresholds { low: 10, high: 40 }));
    for (name, value) in [
        ("chattiness", "loud"),
        ("channel_chattiness", "C1"),
        ("channel_chattiness", "C1=loud"),
        ("rule_thresholds", "50,10"),
        ("rule_thresholds", "10"),
    ] {
        let (s, issues) = Settings::from_pairs([(name, value)]);
        assert_eq!(issues.len(), 1, "{name}={value}");
        assert_eq!(s, Settings::default(), "{name}={value} keeps the default");
    }
    let (s, _) = Settings::from_pairs([("interest_keywords", "Cats, ramen ,")]);
    assert_eq!(s.interest_keywords, vec!["cats", "ramen"]);
}

#[test]
fn the_llm_provider_is_openai_unless_set_and_a_role_may_have_its_own() {
    let d = Settings::default();
    assert_eq!(d.llm_provider, LlmProvider::OpenAi);
    assert_eq!(
        [d.judgment_provider, d.response_provider, d.memory_provider],
        [None, None, None]
    );
    let (s, issues) = Settings::from_pairs([
        ("llm_provider", " Bedrock "),
        (
            "judgment_model",
            "us.anthropic.claude-haiku-4-5-20251001-v1:0",
        ),
        ("response_provider", "openai"),
        ("memory_provider", "bedrock"),
    ]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(s.llm_provider, LlmProvider::Bedrock);
    assert_eq!(
        s.judgment_model,
        "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    );
    assert_eq!(s.judgment_provider, None);
    assert_eq!(s.response_provider, Some(LlmProvider::OpenAi));
    assert_eq!(s.memory_provider, Some(LlmProvider::Bedrock));
    // A blank role provider follows llm_provider; a blank llm_provider
    // is no provider at all.
    let (s, issues) = Settings::from_pairs([("judgment_provider", "  ")]);
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(s.judgment_provider, None);
    let mut s = Settings::default();
    for (name, value) in [
        ("llm_provider", "anthropic"),
        ("llm_provider", ""),
        ("judgment_provider", "azure"),
        ("response_provider", "bedrock-us"),
        ("memory_provider", "open ai"),
    ] {
        assert_eq!(
            s.apply(name, value),
            Err(SettingError::NotAProvider),
            "{name}={value:?}"
        );
    }
    assert_eq!(s, Settings::default(), "nothing was applied");
    assert_eq!(
        SettingError::NotAProvider.to_string(),
        "not openai or bedrock"
    );
    assert_eq!(LlmProvider::Bedrock.to_string(), "bedrock");
}

#[test]
fn proactive_talk_is_off_and_bounded_by_default() {
    let d = Settings::default();
    assert!(!d.proactive);
    assert!(d.proactive_channels.is_empty());
    assert_eq!(d.proactive_after_hours, 24);
    assert_eq!(d.proactive_hours.to_string(), "10-18");
    assert_eq!(d.proactive_days.to_string(), "mon-fri");
    assert_eq!(d.max_proactive_per_channel_week, 1);
    let (s, issues) = Settings::from_pairs([
        ("proactive", "on"),
        ("proactive_channels", "public, G123"),
        ("proactive_after_hours", "48"),
        ("proactive_hours", "9-17"),
        ("proactive_days", "mon,wed,fri"),
        ("max_proactive_per_channel_week", "2"),
    ]);
    assert!(issues.is_empty(), "{issues:?}");
    assert!(s.proactive && s.proactive_channels.public);
    assert_eq!(s.proactive_channels.to_string(), "public,G123");
    assert_eq!(s.proactive_after_hours, 48);
    assert_eq!(s.proactive_hours.to_string(), "9-17");
    assert_eq!(s.proactive_days.to_string(), "mon,wed,fri");
    assert_eq!(s.max_proactive_per_channel_week, 2);
    for (name, value) in [
        ("proactive", "sometimes"),
        ("proactive_channels", "general"),
        ("proactive_after_hours", "0"),
        ("proactive_hours", "18-10"),
        ("proactive_days", "weekdays"),
        ("max_proactive_per_channel_week", "8"),
    ] {
        let (s, issues) = Settings::from_pairs([(name, value)]);
        assert_eq!(issues.len(), 1, "{name}={value}");
        assert_eq!(s, Settings::default(), "{name}={value} keeps the default");
    }
}

#[test]
fn every_setting_is_documented_and_its_value_reads_back() {
    let catalogue = Settings::catalogue();
    let names: Vec<&str> = catalogue.iter().map(|s| s.name).collect();
    assert_eq!(names, SETTING_NAMES);
    let d = Settings::default();
    for setting in &catalogue {
        assert!(!setting.doc.is_empty(), "{} has no doc", setting.name);
        assert!(!setting.kind.is_empty(), "{} has no kind", setting.name);
        assert_eq!(d.text_of(setting.name), Some(setting.default.clone()));
        // What a value shows as is what it parses from: `myao settings get`
        // prints what `set` takes.
        let mut again = Settings::default();
        again
            .apply(setting.name, &setting.default)
            .unwrap_or_else(|e| {
                if !setting.default.is_empty() {
                    panic!("{}: {e}", setting.name)
                }
            });
        assert_eq!(again, d, "{}", setting.name);
    }
    assert_eq!(d.text_of("no_such_setting"), None);
}

#[test]
fn a_value_shows_as_text_that_parses_back_to_it() {
    let pairs = [
        ("channel_chattiness", "C1=quiet,C2=mentions_only"),
        ("rule_thresholds", "-10,40"),
        ("interest_keywords", "rust,lambda"),
        ("retry_delays_seconds", "5,60"),
        ("proactive_channels", "public,G123"),
        ("proactive_days", "mon,wed,fri"),
        ("judgment_provider", "bedrock"),
        ("bot_user_id", "UBOT"),
        ("timezone", "Asia/Tokyo"),
        ("jitter_ratio", "0.25"),
    ];
    let (s, issues) = Settings::from_pairs(pairs);
    assert!(issues.is_empty(), "{issues:?}");
    for (name, text) in pairs {
        assert_eq!(s.text_of(name).as_deref(), Some(text), "{name}");
    }
    assert_eq!(s.judgment().provider, Some(LlmProvider::Bedrock));
    assert_eq!(s.response().model, "gpt-4.1");
}
