"""Filler memories for recall tests: short errands that share no topic with the facts the
tests plant, so that a lever's effect on the planted facts is not drowned or helped by them."""

FILLER = [f"Reminder {i}: {errand}." for i, errand in enumerate([
    "buy milk and eggs", "call the dentist", "water the plants", "pay the gas bill",
    "return the library books", "book the car service", "renew the passport",
    "send the birthday card", "clean the gutters", "walk the dog before work",
    "order printer ink", "fix the squeaky door", "pick up the dry cleaning",
    "charge the camera battery", "take out the recycling", "cancel the gym trial",
    "update the laptop", "back up the photos", "defrost the freezer", "check the tyres",
    "sort the post", "wash the car", "iron the shirts", "buy a new kettle",
    "plan the weekly meals", "feed the cat", "mow the lawn", "vacuum the stairs",
    "refill the soap", "test the smoke alarm", "bleed the radiators", "sweep the patio",
    "oil the bike chain", "pay the rent", "empty the dishwasher", "buy stamps",
])]
