"""Page view models: plain data shaped for one template, built from stored rows and briefings.

May import ``incidents``, ``agent``'s briefing values and ``memory.service``'s values; never a route.
"""
