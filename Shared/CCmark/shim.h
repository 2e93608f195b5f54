#pragma once
#include <cmark-gfm.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm-core-extensions.h>

// The node-type categories are macros Swift cannot import.

/// Whether `node` is a block (paragraph, heading, list item, table cell, ...), not an inline.
static inline int postly_cmark_is_block(cmark_node *node) {
    return (cmark_node_get_type(node) & CMARK_NODE_TYPE_MASK) == CMARK_NODE_TYPE_BLOCK;
}
