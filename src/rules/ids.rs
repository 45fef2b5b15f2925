//! Small value types shared by the whole rules core: seats, cells, offsets and the dense
//! integer ids of catalog entries.
//!
//! Ids are indices into the [`Catalog`](super::Catalog)'s vectors. They are only meaningful
//! together with the catalog that issued them.

use std::fmt;

use super::never::never;

/// One of the two seats at the table. Seat 1 moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Seat {
    /// The seat that moves first.
    One = 1,
    /// The seat that moves second.
    Two = 2,
}

impl Seat {
    /// Both seats, seat 1 first.
    pub const BOTH: [Seat; 2] = [Seat::One, Seat::Two];

    /// The other seat.
    #[must_use]
    pub fn other(self) -> Seat {
        match self {
            Seat::One => Seat::Two,
            Seat::Two => Seat::One,
        }
    }

    /// 0 for seat 1, 1 for seat 2: the index into per-seat arrays.
    #[must_use]
    pub fn index(self) -> usize {
        self as usize - 1
    }

    /// The seat numbered `n` (1 or 2).
    #[must_use]
    pub fn from_number(n: i64) -> Option<Seat> {
        match n {
            1 => Some(Seat::One),
            2 => Some(Seat::Two),
            _ => None,
        }
    }

    /// The seat's number, 1 or 2.
    #[must_use]
    pub fn number(self) -> u8 {
        self as u8
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// A cell position `(x, y)`: `x` the column from the left, `y` the row from the top.
/// It may lie off the board; the [`Board`](super::Board) says whether it is on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Cell {
    /// Column, 0 at the left.
    pub x: i32,
    /// Row, 0 at the top.
    pub y: i32,
}

impl Cell {
    /// The cell at `(x, y)`.
    #[must_use]
    pub const fn new(x: i32, y: i32) -> Cell {
        Cell { x, y }
    }

    /// This cell moved by `offset`.
    #[must_use]
    pub fn offset(self, offset: Offset) -> Cell {
        Cell::new(self.x + i32::from(offset.dx), self.y + i32::from(offset.dy))
    }
}

/// The largest number of cells a board may have (its fixed storage size).
pub const MAX_CELLS: usize = 144;
/// Words of a bitset over a board's cells (64 cells each).
pub(crate) const WORDS: usize = MAX_CELLS.div_ceil(64);
/// [`MAX_CELLS`] as a board side (a board one row high may be that wide).
#[allow(clippy::cast_possible_truncation)]
const MAX_CELLS_SIDE: u8 = MAX_CELLS as u8;
const _: () = assert!(MAX_CELLS <= u8::MAX as usize);

/// The size of a board: which cells are on it. A plain copy, so code that changes the
/// board can keep asking while it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Columns.
    pub width: i32,
    /// Rows.
    pub height: i32,
}

impl Bounds {
    /// A board of `width` × `height`, clamped to at least one cell a side and at most
    /// [`MAX_CELLS`] cells (the loader keeps sizes within that; this only guards).
    #[must_use]
    pub fn clamped(width: u8, height: u8) -> Bounds {
        let width = width.clamp(1, MAX_CELLS_SIDE);
        // At most MAX_CELLS rows, which fits a u8.
        let most = u8::try_from((MAX_CELLS / usize::from(width)).max(1))
            .unwrap_or_else(|_| never!(MAX_CELLS_SIDE, "{MAX_CELLS} cells / {width}"));
        let height = height.clamp(1, most);
        Bounds {
            width: i32::from(width),
            height: i32::from(height),
        }
    }

    /// Number of cells.
    #[must_use]
    pub fn len(self) -> usize {
        let cells = self.width.max(0).saturating_mul(self.height.max(0));
        // Not negative, so it fits.
        usize::try_from(cells).unwrap_or_else(|_| never!(0, "{cells} cells"))
    }

    /// Whether the board has no cells.
    #[must_use]
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The storage index of `cell` (row by row), if it is on the board.
    #[inline]
    #[must_use]
    pub fn index(self, cell: Cell) -> Option<usize> {
        if self.contains(cell) {
            usize::try_from(cell.y * self.width + cell.x).ok()
        } else {
            None
        }
    }

    /// The cell at storage index `index`.
    #[must_use]
    pub fn cell(self, index: usize) -> Cell {
        let w = usize::try_from(self.width.max(1))
            .unwrap_or_else(|_| never!(1, "width {}", self.width));
        // A storage index is below MAX_CELLS, so both parts fit.
        let part = |v: usize| i32::try_from(v).unwrap_or_else(|_| never!(0, "cell index {index}"));
        Cell::new(part(index % w), part(index / w))
    }

    /// Whether `cell` is on the board.
    #[must_use]
    pub fn contains(self, cell: Cell) -> bool {
        cell.x >= 0 && cell.y >= 0 && cell.x < self.width && cell.y < self.height
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

/// A displacement `(dx, dy)`; `dy > 0` points down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Offset {
    /// Columns to the right.
    pub dx: i8,
    /// Rows down.
    pub dy: i8,
}

impl Offset {
    /// The offset `(dx, dy)`.
    #[must_use]
    pub const fn new(dx: i8, dy: i8) -> Offset {
        Offset { dx, dy }
    }

    /// Chebyshev distance from the origin: the number of king steps.
    #[must_use]
    pub fn reach(self) -> i32 {
        i32::from(self.dx.unsigned_abs().max(self.dy.unsigned_abs()))
    }
}

impl fmt::Display for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.dx, self.dy)
    }
}

macro_rules! dense_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u16);

        impl $name {
            /// The index of this entry in its catalog vector.
            #[must_use]
            pub fn index(self) -> usize {
                usize::from(self.0)
            }

            /// The id of the entry at `index` of its catalog list. The loader keeps every
            /// list shorter than `u16::MAX`, so a larger index is a bug
            /// ([`never!`](crate::rules::never)).
            #[must_use]
            pub fn from_index(index: usize) -> Self {
                match u16::try_from(index) {
                    Ok(i) => Self(i),
                    Err(_) => $crate::rules::never!(
                        Self(u16::MAX),
                        "{} from index {index}, past the loader's bound",
                        stringify!($name)
                    ),
                }
            }
        }
    };
}

dense_id!(
    /// A card of the catalog.
    CardId
);
dense_id!(
    /// A token type of the catalog.
    TokenTypeId
);
dense_id!(
    /// An ability of the catalog.
    AbilityId
);
dense_id!(
    /// A named area of the catalog.
    AreaId
);
dense_id!(
    /// A ready deck of the catalog.
    DeckId
);
dense_id!(
    /// A script file referenced by the catalog (the Lua host loads it).
    ScriptId
);
