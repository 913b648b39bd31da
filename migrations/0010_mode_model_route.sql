-- Each mode names the model route its turns use (issue 13); every existing mode keeps the default route.
ALTER TABLE modes ADD COLUMN model_route TEXT NOT NULL DEFAULT 'default';
