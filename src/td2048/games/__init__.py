"""Game rules on 64-bit bitboards. One module per game; shared bit operations in :mod:`bitboard`."""
