// Drop one index by name (used to widen a schema type's fulltext index). Template: `index` is a
// validated identifier.
DROP INDEX `{{ index }}` IF EXISTS
