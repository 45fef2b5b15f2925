//! The board: fixed-size cell storage, so that cloning a game state is one `memcpy`.

use super::catalog::MAX_CELLS;
use super::ids::{CardId, Cell, Seat, TokenTypeId};

/// A token on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Token {
    /// Its value (income before auras and multiplier).
    pub value: i32,
    /// Its type.
    pub kind: TokenTypeId,
    /// The card that placed it, if a card did.
    pub card: Option<CardId>,
    /// Its owner.
    pub seat: Seat,
}

/// A rectangular board of at most [`MAX_CELLS`] cells.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Board {
    width: u8,
    height: u8,
    cells: [Option<Token>; MAX_CELLS],
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("tokens", &self.tokens().collect::<Vec<_>>())
            .finish()
    }
}

impl Board {
    /// An empty board. The caller (the loader) keeps `width × height ≤ MAX_CELLS`;
    /// a larger request is clamped.
    #[must_use]
    pub fn new(width: u8, height: u8) -> Board {
        let width = width.max(1);
        let height = height.clamp(1, u8::try_from(MAX_CELLS / usize::from(width)).unwrap_or(1));
        Board {
            width,
            height,
            cells: [None; MAX_CELLS],
        }
    }

    /// Width in cells.
    #[must_use]
    pub fn width(&self) -> i32 {
        i32::from(self.width)
    }

    /// Height in cells.
    #[must_use]
    pub fn height(&self) -> i32 {
        i32::from(self.height)
    }

    /// Number of cells.
    #[must_use]
    pub fn len(&self) -> usize {
        usize::from(self.width) * usize::from(self.height)
    }

    /// Whether the board has no cells (never true for a real board).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `cell` is on the board.
    #[must_use]
    pub fn contains(&self, cell: Cell) -> bool {
        cell.x >= 0 && cell.y >= 0 && cell.x < self.width() && cell.y < self.height()
    }

    /// The storage index of `cell`, if it is on the board.
    #[must_use]
    pub fn index(&self, cell: Cell) -> Option<usize> {
        if self.contains(cell) {
            usize::try_from(cell.y * self.width() + cell.x).ok()
        } else {
            None
        }
    }

    /// The cell at storage index `index`.
    #[must_use]
    pub fn cell(&self, index: usize) -> Cell {
        let w = usize::from(self.width);
        Cell::new(
            i32::try_from(index % w).unwrap_or(0),
            i32::try_from(index / w).unwrap_or(0),
        )
    }

    /// The token on `cell`, if any (none off the board).
    #[must_use]
    pub fn get(&self, cell: Cell) -> Option<Token> {
        self.index(cell).and_then(|i| self.cells[i])
    }

    /// The token at storage index `index`.
    #[must_use]
    pub fn at(&self, index: usize) -> Option<Token> {
        self.cells.get(index).copied().flatten()
    }

    pub(crate) fn at_mut(&mut self, index: usize) -> Option<&mut Token> {
        self.cells.get_mut(index).and_then(Option::as_mut)
    }

    pub(crate) fn put(&mut self, index: usize, token: Option<Token>) {
        if let Some(slot) = self.cells.get_mut(index) {
            *slot = token;
        }
    }

    pub(crate) fn take(&mut self, index: usize) -> Option<Token> {
        self.cells.get_mut(index).and_then(Option::take)
    }

    /// Every token with its cell, row by row from the top left.
    pub fn tokens(&self) -> impl Iterator<Item = (Cell, Token)> + '_ {
        self.cells[..self.len()]
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (self.cell(i), t)))
    }

    /// Every token with its storage index.
    pub fn indexed(&self) -> impl Iterator<Item = (usize, Token)> + '_ {
        self.cells[..self.len()]
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (i, t)))
    }

    /// Every empty cell, row by row.
    pub fn empty_cells(&self) -> impl Iterator<Item = Cell> + '_ {
        self.cells[..self.len()]
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_none())
            .map(|(i, _)| self.cell(i))
    }

    /// Whether no cell is empty.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.cells[..self.len()].iter().all(Option::is_some)
    }
}
