//! The user's settings, kept in `settings.yaml` beside the decks: the default deck and
//! the client's preferences. Versioned like the decks (`format_version`, required);
//! every other key is optional, a missing one takes its default, and numbers out of
//! range are brought back into it, so a hand-edited file never stops the client.

use serde::{Deserialize, Serialize};

use super::FormatError;

/// The settings format written today.
pub const SETTINGS_VERSION: u32 = 1;

/// The user's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// The file format (always [`SETTINGS_VERSION`] once loaded).
    pub format_version: u32,
    /// The saved deck the new-game screen offers first, by id.
    pub default_deck: Option<String>,
    /// Whether moves animate.
    pub animations: bool,
    /// The length of one animation step, in ms (60 to 500).
    pub animation_step_ms: u64,
    /// The shortest time before the AI's move shows, in ms (0 to 3000).
    pub ai_delay_ms: u64,
    /// The hard AI's thinking time per move, in ms (100 to 5000).
    pub ai_think_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            format_version: SETTINGS_VERSION,
            default_deck: None,
            animations: true,
            animation_step_ms: 180,
            ai_delay_ms: 600,
            ai_think_ms: 1000,
        }
    }
}

impl Settings {
    /// The ranges the client's sliders allow.
    pub const ANIMATION_STEP_MS: std::ops::RangeInclusive<u64> = 60..=500;
    /// See [`Settings::ANIMATION_STEP_MS`].
    pub const AI_DELAY_MS: std::ops::RangeInclusive<u64> = 0..=3000;
    /// See [`Settings::ANIMATION_STEP_MS`].
    pub const AI_THINK_MS: std::ops::RangeInclusive<u64> = 100..=5000;

    /// Bring every number into its range.
    #[must_use]
    pub fn clamped(mut self) -> Settings {
        let clamp = |v: u64, r: &std::ops::RangeInclusive<u64>| v.clamp(*r.start(), *r.end());
        self.animation_step_ms = clamp(self.animation_step_ms, &Self::ANIMATION_STEP_MS);
        self.ai_delay_ms = clamp(self.ai_delay_ms, &Self::AI_DELAY_MS);
        self.ai_think_ms = clamp(self.ai_think_ms, &Self::AI_THINK_MS);
        self.default_deck = self.default_deck.filter(|d| super::valid_id(d));
        self
    }

    /// The settings as written to their file.
    #[must_use]
    pub fn to_yaml(&self) -> String {
        let mut out = format!("format_version: {}\n", self.format_version);
        if let Some(d) = &self.default_deck {
            out.push_str(&format!("default_deck: {}\n", super::scalar(d)));
        }
        out.push_str(&format!(
            "animations: {}\nanimation_step_ms: {}\nai_delay_ms: {}\nai_think_ms: {}\n",
            self.animations, self.animation_step_ms, self.ai_delay_ms, self.ai_think_ms
        ));
        out
    }
}

/// Read a settings file's text (empty text: the defaults).
pub fn parse_settings(text: &str) -> Result<Settings, FormatError> {
    if text.trim().is_empty() {
        return Ok(Settings::default());
    }
    let version: super::Versioned = serde_saphyr::from_str(text)?;
    if version.format_version.is_none() {
        return Err(FormatError::Missing(SETTINGS_VERSION));
    }
    let settings: Settings = serde_saphyr::from_str(text)?;
    match settings.format_version {
        SETTINGS_VERSION => Ok(settings.clamped()),
        v if v > SETTINGS_VERSION => Err(FormatError::Newer {
            found: v,
            reads: SETTINGS_VERSION,
        }),
        v => Err(FormatError::Unknown {
            found: v,
            what: "settings",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_missing_keys_take_defaults() {
        let s = Settings {
            default_deck: Some("my-deck".into()),
            animations: false,
            animation_step_ms: 90,
            ..Settings::default()
        };
        assert_eq!(parse_settings(&s.to_yaml()).ok(), Some(s));
        assert_eq!(parse_settings("").ok(), Some(Settings::default()));
        let partial = parse_settings("format_version: 1\nanimations: false\n");
        assert_eq!(
            partial.ok(),
            Some(Settings {
                animations: false,
                ..Settings::default()
            })
        );
    }

    #[test]
    fn numbers_out_of_range_are_brought_back_and_unknown_keys_refused() {
        let s = parse_settings("format_version: 1\nanimation_step_ms: 5\nai_think_ms: 99999\n");
        assert_eq!(s.as_ref().map(|s| s.animation_step_ms).ok(), Some(60));
        assert_eq!(s.as_ref().map(|s| s.ai_think_ms).ok(), Some(5000));
        let typo = parse_settings("format_version: 1\nanimation: false\n");
        assert!(typo.is_err_and(|e| e.to_string().contains("animation")));
        let newer = parse_settings("format_version: 9\n");
        assert!(newer.is_err_and(|e| e.to_string().contains("newer")));
        let bad_deck = parse_settings("format_version: 1\ndefault_deck: \"../x\"\n");
        assert_eq!(bad_deck.map(|s| s.default_deck).ok(), Some(None));
        let unversioned = parse_settings("animations: false\n");
        assert!(unversioned.is_err_and(|e| e.to_string().contains("format_version is missing")));
        // An id YAML would read as something else stays text.
        let null = Settings {
            default_deck: Some("null".into()),
            ..Settings::default()
        };
        assert_eq!(parse_settings(&null.to_yaml()).ok(), Some(null));
    }
}
