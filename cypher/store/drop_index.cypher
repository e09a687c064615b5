DROP INDEX `{{ name }}` IF EXISTS
