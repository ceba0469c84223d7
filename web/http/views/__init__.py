"""Page view models: plain data shaped for one template, built from stored rows and briefings."""
