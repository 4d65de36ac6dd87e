//! Colour depth: themes are written in 24-bit colour; a terminal without true colour
//! (common over SSH and in tmux without `Tc`) gets the nearest colour of the 256-colour
//! palette, or of the 16 basic colours.

use ratatui::style::{Color, Style};

use super::theme::Theme;

/// What the terminal can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    TrueColor,
    Ansi256,
    Ansi16,
}

impl Depth {
    /// From `COLORTERM` (`truecolor` / `24bit`) and `TERM` (`*256color*`).
    pub fn detect(colorterm: Option<&str>, term: Option<&str>) -> Depth {
        let colorterm = colorterm.unwrap_or_default().to_ascii_lowercase();
        if colorterm.contains("truecolor") || colorterm.contains("24bit") {
            Depth::TrueColor
        } else if term.unwrap_or_default().contains("256color") {
            Depth::Ansi256
        } else {
            Depth::Ansi16
        }
    }
}

/// The 6x6x6 cube levels of the 256-colour palette.
const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

fn nearest_level(v: u8) -> usize {
    CUBE.iter()
        .enumerate()
        .min_by_key(|(_, level)| (i32::from(**level) - i32::from(v)).abs())
        .map_or(0, |(i, _)| i)
}

fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> i32 {
    let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
    d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)
}

/// The nearest of the 240 cube and grey entries of the 256-colour palette.
pub fn to_256(r: u8, g: u8, b: u8) -> u8 {
    let (ri, gi, bi) = (nearest_level(r), nearest_level(g), nearest_level(b));
    let cube = (CUBE[ri], CUBE[gi], CUBE[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let avg = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let grey_step = u8::try_from(((avg.saturating_sub(8)) / 10).min(23)).unwrap_or(23);
    let grey = 8 + 10 * grey_step;
    let grey_index = 232 + usize::from(grey_step);
    let pick = if distance((r, g, b), (grey, grey, grey)) < distance((r, g, b), cube) {
        grey_index
    } else {
        cube_index
    };
    u8::try_from(pick).unwrap_or(231)
}

/// The nearest of the 16 basic colours (standard xterm values).
pub fn to_16(r: u8, g: u8, b: u8) -> Color {
    const BASIC: [(Color, (u8, u8, u8)); 16] = [
        (Color::Black, (0, 0, 0)),
        (Color::Red, (205, 0, 0)),
        (Color::Green, (0, 205, 0)),
        (Color::Yellow, (205, 205, 0)),
        (Color::Blue, (0, 0, 238)),
        (Color::Magenta, (205, 0, 205)),
        (Color::Cyan, (0, 205, 205)),
        (Color::Gray, (229, 229, 229)),
        (Color::DarkGray, (127, 127, 127)),
        (Color::LightRed, (255, 0, 0)),
        (Color::LightGreen, (0, 255, 0)),
        (Color::LightYellow, (255, 255, 0)),
        (Color::LightBlue, (92, 92, 255)),
        (Color::LightMagenta, (255, 0, 255)),
        (Color::LightCyan, (0, 255, 255)),
        (Color::White, (255, 255, 255)),
    ];
    BASIC
        .iter()
        .min_by_key(|(_, rgb)| distance((r, g, b), *rgb))
        .map_or(Color::Reset, |(c, _)| *c)
}

fn color(c: Color, depth: Depth) -> Color {
    match (c, depth) {
        (Color::Rgb(r, g, b), Depth::Ansi256) => Color::Indexed(to_256(r, g, b)),
        (Color::Rgb(r, g, b), Depth::Ansi16) => to_16(r, g, b),
        (other, _) => other,
    }
}

fn style(s: Style, depth: Depth) -> Style {
    Style {
        fg: s.fg.map(|c| color(c, depth)),
        bg: s.bg.map(|c| color(c, depth)),
        ..s
    }
}

/// `theme` with every colour brought within `depth`.
pub fn fit(theme: Theme, depth: Depth) -> Theme {
    if depth == Depth::TrueColor {
        return theme;
    }
    theme.map_styles(|s| style(s, depth))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Verdict;

    #[test]
    fn detection_follows_colorterm_then_term() {
        assert_eq!(
            Depth::detect(Some("truecolor"), Some("xterm")),
            Depth::TrueColor
        );
        assert_eq!(Depth::detect(None, Some("screen-256color")), Depth::Ansi256);
        assert_eq!(Depth::detect(None, Some("vt100")), Depth::Ansi16);
    }

    #[test]
    fn rgb_maps_to_the_nearest_palette_entry() {
        assert_eq!(to_256(255, 0, 0), 196);
        assert_eq!(to_256(0, 0, 0), 16);
        assert_eq!(to_256(128, 128, 128), 244);
        assert_eq!(to_16(250, 10, 10), Color::LightRed);
        assert_eq!(to_16(10, 10, 10), Color::Black);
    }

    #[test]
    fn a_fitted_theme_holds_no_rgb_colour() {
        for name in ["dark", "light", "high-contrast"] {
            let theme = Theme::by_name(name).unwrap_or_else(|e| panic!("{e}"));
            for depth in [Depth::Ansi256, Depth::Ansi16] {
                let fitted = fit(theme.clone(), depth);
                for v in Verdict::ALL {
                    let s = fitted.verdict(v);
                    for c in [s.fg, s.bg].into_iter().flatten() {
                        assert!(!matches!(c, Color::Rgb(..)), "{name} {depth:?} {v}: {c:?}");
                    }
                }
                for s in [
                    fitted.text,
                    fitted.highlight,
                    fitted.mismatch,
                    fitted.border,
                ] {
                    assert!(!matches!(s.fg, Some(Color::Rgb(..))), "{name} {depth:?}");
                    assert!(!matches!(s.bg, Some(Color::Rgb(..))), "{name} {depth:?}");
                }
            }
        }
    }
}
