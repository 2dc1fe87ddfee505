// token_display.h — what a token chip shows: a vocabulary entry made readable, and a sequence of
// tokens where byte tokens that only together form a character are shown as that character.
//
// SentencePiece-style BPE with byte fallback (Llama 2, Mistral) spells a character missing from
// the vocabulary as one '<0xNN>' token per UTF-8 byte; byte-level BPE (GPT-2, Qwen2) may cut a
// character between tokens. Either way a single token can hold part of a character.
#pragma once

#include <string>
#include <vector>

#include "text/vocab.h"

namespace sf {

// The byte a byte-fallback piece stands for ('<0xE4>' -> 0xE4; Hugging Face writes '<0x%02X>'),
// or -1 for any other string.
int byte_fallback_value(const std::string& piece);

// A byte-fallback piece as the byte it stands for when that byte is a character by itself (ASCII:
// '<0x0A>' -> "\n", '<0x41>' -> "A"); any other string, and a byte that is only part of a
// character ('<0xE4>'), unchanged.
std::string display_byte_piece(const std::string& piece);

// Bytes made readable: valid UTF-8 as it is, each byte of an incomplete or ill-formed sequence as
// '<0xC3>' (a token holding part of a character).
std::string show_bytes(const std::string& bytes);

// One label per id (ids out of range included): Vocab::display, except where consecutive tokens
// hold the bytes of characters that none holds whole — those tokens (up to 8 at a time) are each
// shown as the characters they form together followed by their own bytes in hex: Llama's
// '<0xE4>' '<0xB8>' '<0xAD>' -> "中·E4", "中·B8", "中·AD".
std::vector<std::string> display_tokens(const Vocab& v, const std::vector<int>& ids);

}  // namespace sf
