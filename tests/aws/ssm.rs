//! SSM (`SsmSettingsSource`, `SsmSecrets`).

use super::*;

async fn put_parameter(
    client: &aws_sdk_ssm::Client,
    name: &str,
    value: &str,
    kind: ParameterType,
) -> Result<()> {
    client
        .put_parameter()
        .name(name)
        .value(value)
        .r#type(kind)
        .overwrite(true)
        .send()
        .await
        .with_context(|| format!("PutParameter {name}"))?;
    Ok(())
}

#[tokio::test]
async fn ssm_settings_are_the_plain_parameters_under_the_path() -> Result<()> {
    let client = ssm_client().await;
    let path = format!("/{}", unique("myao"));
    put_parameter(
        &client,
        &format!("{path}/min_wait_seconds"),
        "120",
        ParameterType::String,
    )
    .await?;
    put_parameter(
        &client,
        &format!("{path}/persona_name"),
        "tama",
        ParameterType::String,
    )
    .await?;
    put_parameter(
        &client,
        &format!("{path}/jitter_ratio"),
        "0.1",
        ParameterType::String,
    )
    .await?;
    put_parameter(
        &client,
        &format!("{path}/secrets/slack_bot_token"),
        "bot-token-not-a-setting",
        ParameterType::SecureString,
    )
    .await?;
    put_parameter(
        &client,
        &format!("{path}-other/message_limit"),
        "3",
        ParameterType::String,
    )
    .await?;

    for p in [path.clone(), format!("{path}/")] {
        let source = SsmSettingsSource {
            client: client.clone(),
            path: p,
        };
        let mut pairs = source.load().await?;
        pairs.sort();
        assert_eq!(
            pairs,
            [
                ("jitter_ratio".to_owned(), "0.1".to_owned()),
                ("min_wait_seconds".to_owned(), "120".to_owned()),
                ("persona_name".to_owned(), "tama".to_owned()),
            ]
        );
        let (settings, issues) =
            Settings::from_pairs(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(settings.min_wait_seconds, 120);
        assert_eq!(settings.persona_name, "tama");
        assert_eq!(settings.jitter_ratio, 0.1);
        let defaults = Settings::default();
        assert_eq!(settings.message_limit, defaults.message_limit, "a default");
        assert_eq!(settings.judgment(), defaults.judgment());
    }

    let empty = SsmSettingsSource {
        client: client.clone(),
        path: format!("/{}", unique("myao-empty")),
    };
    // No settings at all is a wrong path, not "all defaults": refused, so
    // that a cold start fails closed.
    let err = empty.load().await.expect_err("an empty path is refused");
    assert!(err.to_string().contains("MYAO_SETTINGS_PATH"), "{err}");
    Ok(())
}

#[tokio::test]
async fn ssm_settings_read_every_page() -> Result<()> {
    let client = ssm_client().await;
    let path = format!("/{}", unique("myao"));
    // GetParametersByPath answers 10 at most per page.
    for i in 0..23 {
        put_parameter(
            &client,
            &format!("{path}/p{i:02}"),
            &i.to_string(),
            ParameterType::String,
        )
        .await?;
    }
    let pairs = SsmSettingsSource {
        client,
        path: path.clone(),
    }
    .load()
    .await?;
    assert_eq!(pairs.len(), 23);
    Ok(())
}

#[tokio::test]
async fn ssm_secrets_are_decrypted_and_cached() -> Result<()> {
    let client = ssm_client().await;
    let name = format!("/{}/secrets/slack_bot_token", unique("myao"));
    put_parameter(&client, &name, "xoxb-first", ParameterType::SecureString).await?;

    let secrets = SsmSecrets::new(client.clone());
    assert_eq!(secrets.get(&name).await?, "xoxb-first");
    put_parameter(&client, &name, "xoxb-second", ParameterType::SecureString).await?;
    assert_eq!(
        secrets.get(&name).await?,
        "xoxb-first",
        "read from the cache within its TTL"
    );
    assert!(
        !format!("{secrets:?}").contains("xoxb"),
        "Debug shows no value"
    );

    let uncached = SsmSecrets::with_ttl(client.clone(), StdDuration::ZERO);
    assert_eq!(uncached.get(&name).await?, "xoxb-second");

    let missing = secrets
        .get(&format!("{name}-missing"))
        .await
        .expect_err("no such parameter");
    assert!(!missing.is_retryable());
    assert!(missing.to_string().contains("-missing"), "{missing}");
    Ok(())
}

#[tokio::test]
async fn a_teams_own_settings_override_the_stacks_for_that_team_alone() -> Result<()> {
    use myao_core::app::settings::CachedSettings;
    use myao_core::ports::SettingsProvider;
    let client = ssm_client().await;
    let path = format!("/{}/", unique("myao"));
    for (name, value) in [
        ("persona_name", "tama"),
        ("message_limit", "40"),
        ("teams/T0ACME/persona_name", "kuro"),
        ("teams/T0ACME/max_llm_calls_per_day", "7"),
    ] {
        put_parameter(
            &client,
            &format!("{path}{name}"),
            value,
            ParameterType::String,
        )
        .await?;
    }
    let source = Arc::new(SsmSettingsSource {
        client: client.clone(),
        path: path.clone(),
    });
    let stack = CachedSettings::new(source, Arc::new(SystemClock), Duration::seconds(60));
    let acme = stack.for_team(&myao_domain::TeamId::parse("T0ACME")?);
    let beta = stack.for_team(&myao_domain::TeamId::parse("T0BETA")?);

    let (stacks, acmes, betas) = (
        stack.current().await?,
        acme.current().await?,
        beta.current().await?,
    );
    // The stack's read never reaches a team's (nor a team another's).
    assert_eq!(stacks.persona_name, "tama");
    assert_eq!(betas.persona_name, "tama");
    assert_eq!(acmes.persona_name, "kuro");
    assert_eq!(acmes.max_llm_calls_per_day, 7);
    assert_ne!(stacks.max_llm_calls_per_day, 7);
    assert_eq!(
        acmes.message_limit, 40,
        "the stack's where the team has none"
    );
    // Asked of a team's settings, another team's are that team's.
    let beta_from_acme = acme.for_team(&myao_domain::TeamId::parse("T0BETA")?);
    assert_eq!(beta_from_acme.current().await?.persona_name, "tama");
    Ok(())
}
