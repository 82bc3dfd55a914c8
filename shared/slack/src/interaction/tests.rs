use super::*;

/// A click of the bot's feedback buttons, as Slack's interactivity sends
/// it (trimmed to the fields read).
fn click(value: &str) -> Value {
    json!({
        "type": "block_actions",
        "api_app_id": "A1",
        "team": {"id": "T1", "domain": "example"},
        "user": {"id": "U1", "username": "ann", "team_id": "T1"},
        "container": {"type": "message", "message_ts": "1767600000.000100",
                      "channel_id": "C1", "is_ephemeral": false},
        "channel": {"id": "C1", "name": "general"},
        "message": {"type": "message", "user": "UBOT", "bot_id": "B1",
                    "ts": "1767600000.000100", "text": "a reply"},
        "actions": [{"type": "feedback_buttons", "action_id": FEEDBACK_ACTION,
                     "block_id": "x1", "value": value, "action_ts": "1767600010.000200"}],
    })
}

/// `payload` as Slack posts it: a URL-encoded form.
fn form(payload: &Value) -> Vec<u8> {
    let json = payload.to_string();
    let mut body = b"payload=".to_vec();
    for b in json.bytes() {
        match b {
            b' ' => body.push(b'+'),
            b if b.is_ascii_alphanumeric() || b"-_.*".contains(&b) => body.push(b),
            b => body.extend(format!("%{b:02X}").bytes()),
        }
    }
    body
}

fn feedback(body: &[u8]) -> Feedback {
    match form_interaction(body) {
        Some(Ok(Interaction::Feedback(f))) => f,
        other => panic!("not a feedback click: {other:?}"),
    }
}

#[test]
fn a_click_of_a_feedback_button_is_read_from_the_form() {
    let up = feedback(&form(&click(POSITIVE)));
    assert_eq!(
        up,
        Feedback {
            user: UserId::parse("U1").unwrap(),
            channel: ChannelId::parse("C1").unwrap(),
            post: Ts::parse("1767600000.000100").unwrap(),
            hint: Hint::Positive,
            author: Some(UserId::parse("UBOT").unwrap()),
            by_app: true,
            api_app_id: Some("A1".to_owned()),
            team_id: Some("T1".to_owned()),
        }
    );
    assert_eq!(feedback(&form(&click(NEGATIVE))).hint, Hint::Negative);
    // Without `channel` and `message`: the container says where.
    let mut bare = click(NEGATIVE);
    bare.as_object_mut().unwrap().remove("channel");
    bare.as_object_mut().unwrap().remove("message");
    let f = feedback(&form(&bare));
    assert_eq!(
        (f.channel.as_str(), f.author, f.by_app),
        ("C1", None, false)
    );
    // Socket Mode's envelope carries the JSON as is.
    let json = click(POSITIVE).to_string();
    assert!(matches!(
        parse_interaction(json.as_bytes()),
        Ok(Interaction::Feedback(Feedback {
            hint: Hint::Positive,
            ..
        }))
    ));
}

/// A click through an org-wide install (Enterprise Grid) is the
/// organisation's, whichever of its workspaces it comes from; through an
/// install in one workspace of an organisation, the workspace's.
#[test]
fn a_click_through_an_org_wide_install_is_the_organisations() {
    let mut org = click(POSITIVE);
    let fields = org.as_object_mut().unwrap();
    fields.insert("enterprise".into(), json!({"id": "E0GRID", "name": "Grid"}));
    fields.insert("is_enterprise_install".into(), json!(true));
    assert_eq!(feedback(&form(&org)).team_id.as_deref(), Some("E0GRID"));
    org.as_object_mut()
        .unwrap()
        .insert("is_enterprise_install".into(), json!(false));
    assert_eq!(feedback(&form(&org)).team_id.as_deref(), Some("T1"));
}

#[test]
fn an_events_api_body_is_no_interaction() {
    assert!(form_interaction(br#"{"type":"event_callback"}"#).is_none());
    assert!(form_interaction(b"  \n{\"payload=\":1}").is_none());
    assert!(form_interaction(b"").is_none());
    assert!(form_interaction(b"token=x&team_id=T1").is_none());
    // The payload need not come first.
    let body = [b"x=1&".as_slice(), &form(&click(POSITIVE))].concat();
    assert_eq!(feedback(&body).hint, Hint::Positive);
}

#[test]
fn other_interactions_and_other_actions_are_no_feedback() {
    let other = |payload: Value| match form_interaction(&form(&payload)) {
        Some(Ok(Interaction::Other { kind })) => kind,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        other(json!({"type": "view_submission", "user": {"id": "U1"}})),
        "view_submission"
    );
    assert_eq!(
        other(json!({"type": "shortcut", "callback_id": "x"})),
        "shortcut"
    );
    let mut button = click(POSITIVE);
    button["actions"][0]["action_id"] = json!("approve");
    assert_eq!(other(button), "block_actions");
    // The bot's action with a value it never sends.
    assert_eq!(other(click("maybe")), "block_actions");
    let mut none = click(POSITIVE);
    none["actions"] = json!([]);
    assert_eq!(other(none), "block_actions");
    // A feedback click among other actions counts.
    let mut two = click(NEGATIVE);
    two["actions"] = json!([{"action_id": "approve", "value": "yes"}, two["actions"][0]]);
    assert_eq!(feedback(&form(&two)).hint, Hint::Negative);
}

#[test]
fn malformed_interactions_are_errors_that_quote_nothing() {
    let error = |body: &[u8]| match form_interaction(body) {
        Some(Err(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(error(b"payload=%7"), InteractionError::BadForm);
    assert_eq!(error(b"payload=%zz"), InteractionError::BadForm);
    assert_eq!(error(b"payload=%FF%FE"), InteractionError::BadForm);
    assert!(matches!(
        error(b"payload=%7Bnot+json"),
        InteractionError::Payload(EventParseError::NotJson { .. })
    ));
    assert!(matches!(
        error(&form(&json!({"user": {"id": "U1"}}))),
        InteractionError::Payload(EventParseError::Missing("type"))
    ));
    for (path, field) in [("user", "user.id"), ("container", "container.message_ts")] {
        let mut broken = click(POSITIVE);
        broken.as_object_mut().unwrap().remove(path);
        if path == "container" {
            broken["message"].as_object_mut().unwrap().remove("ts");
        }
        let e = error(&form(&broken));
        assert_eq!(
            e,
            InteractionError::Payload(EventParseError::Missing(field)),
            "{path}"
        );
    }
    let mut bad = click(POSITIVE);
    bad["user"]["id"] = json!("secret words");
    let e = error(&form(&bad));
    assert!(
        matches!(
            &e,
            InteractionError::Payload(EventParseError::BadId {
                field: "user.id",
                ..
            })
        ),
        "{e:?}"
    );
    assert!(!e.to_string().contains("secret"), "{e}");
}

#[test]
fn the_blocks_hold_the_text_in_sections_and_the_buttons() {
    let blocks = feedback_blocks("hello &lt;there&gt;");
    let blocks = blocks.as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0]["type"], "section");
    assert_eq!(blocks[0]["text"]["type"], "mrkdwn");
    assert_eq!(blocks[0]["text"]["text"], "hello &lt;there&gt;");
    assert_eq!(blocks[0]["text"]["verbatim"], true);
    let buttons = &blocks[1];
    assert_eq!(buttons["type"], "context_actions");
    let element = &buttons["elements"][0];
    assert_eq!(element["type"], "feedback_buttons");
    assert_eq!(element["action_id"], FEEDBACK_ACTION);
    assert_eq!(element["positive_button"]["value"], POSITIVE);
    assert_eq!(element["negative_button"]["value"], NEGATIVE);
    // What the buttons send back is read as the hint they stand for.
    let mut back = click(POSITIVE);
    back["actions"][0]["value"] = element["negative_button"]["value"].clone();
    assert_eq!(feedback(&form(&back)).hint, Hint::Negative);
}

#[test]
fn a_long_text_is_cut_into_sections_slack_takes() {
    let units = |s: &str| s.encode_utf16().count();
    // Lines of words, with escapes and a link, past three sections.
    let line = "ねこ &amp; cats <https://example.com|a link> meow.\n";
    let text = line.repeat(250);
    let parts = sections(&text);
    assert!(parts.len() >= 3, "{}", parts.len());
    for part in &parts {
        assert!(units(part) <= SECTION_MAX, "{}", units(part));
        assert!(part.matches('&').count() == part.matches(';').count());
        assert!(part.matches('<').count() == part.matches('>').count());
    }
    assert_eq!(parts.concat().replace('\n', ""), text.replace('\n', ""));
    // Emoji count twice, as UTF-16 does.
    let emoji = "🐱".repeat(SECTION_MAX);
    let parts = sections(&emoji);
    assert_eq!(parts.len(), 2);
    assert!(parts.iter().all(|p| units(p) <= SECTION_MAX));
    // No space anywhere: cut where it stops fitting.
    let solid = "a".repeat(SECTION_MAX + 10);
    assert_eq!(
        sections(&solid).iter().map(|p| p.len()).collect::<Vec<_>>(),
        [SECTION_MAX, 10]
    );
    assert!(sections("  ").is_empty());
    let blocks = feedback_blocks(&text);
    assert_eq!(blocks.as_array().unwrap().len(), sections(&text).len() + 1);
}
