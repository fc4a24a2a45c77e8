/* xml_check.h — a small well-formedness check of an XML document (the SVG charts): one root
 * element, every element closed in order, attribute values quoted, no raw '<' in text or
 * values, '&' only in the five named entities or a numeric reference. Not a validator: enough
 * to catch what a hand-written writer gets wrong (an unescaped label, a tag left open). */
#ifndef PTXJIT_TEST_XML_CHECK_H
#define PTXJIT_TEST_XML_CHECK_H

#include <stddef.h>

/* NULL when text is well-formed, else a static message naming the first fault's offset. */
const char *xml_check(const char *text);
/* How many times needle occurs in text. */
size_t xml_count(const char *text, const char *needle);

#endif
