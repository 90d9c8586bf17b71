"""VTT's 12 categories and 198 topics (the paper's Table 6), and topic names from COIN's classes.

COIN.json names a task by its class in CamelCase ("AttendNBASkillsChallenge", "MakeRJ45Cable")
and has no domain field (COIN's 12 domains live in a separate spreadsheet); CrossTask names a
task by its title ("Make a Latte") and has no domain at all. The VTT paper puts every topic in
one of 12 categories, COIN's domains renamed, the 18 CrossTask topics "manually classified into
existing categories" (section 3.2), and prints the full list as Table 6. That table is the data
below (topics spelled as printed).

A topic is matched to Table 6 by its key: lowercase letters and digits only, so COIN's
"CleanBathtub", Table 6's "Clean Bath tub" and "clean bathtub" are one topic. `topic_name` gives
Table 6's spelling when the topic is in the table, else the CamelCase class split into words.
"""

from __future__ import annotations

import re

#: Table 6 of the VTT paper: category -> its topics; CrossTask's topics are starred there and
#: listed in CROSSTASK_TOPICS here
TABLE6: dict[str, tuple[str, ...]] = {
    "Nursing and Care": (
        "Wash Dog", "Use Earplugs", "Use Neti Pot", "Put On Hair Extensions",
        "Use Epinephrine Auto-injector", "Perform CPR", "Wear Contact Lenses",
        "Remove Blackheads With Glue", "Give An Intramuscular Injection", "Shave Beard",
        "Wash Hair", "Bandage Dog Paw", "Draw Blood", "Bandage Head",
    ),
    "Pets and Fruit": (
        "Plant Tree", "Transplant", "Graft", "Cut Grape Fruit", "Cut Mango", "Cut Cantaloupe",
        "Sow",
    ),
    "Furniture and Decoration": (
        "Install Shower Head", "Install Ceramic Tile", "Install Air Conditioner",
        "Install Curtain", "Lubricate A Lock", "Replace Door Knob", "Install Wood Flooring",
        "Install Closetool", "Assemble Cabinet", "Assemble Sofa", "Replace Faucet",
        "Replace Toilet Seat", "Assemble Bed", "Build Simple Floating Shelves",
        "Assemble Office Chair",
    ),
    "Leisure and Performance": (
        "Make Paper Wind Mill", "Perform Vanishing Glass Trick", "Raise Flag",
        "Play Frisbee With A Dog", "Make Chinese Lantern", "Carve Pumpkin",
        "Change Guitar Strings", "Perform Paper To Money Trick", "Pitch A Tent",
        "Open Champagne Bottle", "Blow Sugar", "Make Paper Easter Baskets",
        "Cut And Restore Rope Trick", "Do Lino Printing", "Replace Drumhead", "Prepare Sumi Ink",
        "Prepare Canvas",
    ),
    "Dish": (
        "Make Kimchi Fried Rice", "Cook Omelet", "Make Sandwich", "Grill Steak", "Clean Fish",
        "Use Toaster", "Clean Shrimp", "Make Burger", "Make French Toast", "Wrap Zongzi",
        "Make French Strawberry Cake", "Make Pickles", "Boil Noodles",
        "Make Bread and Butter Pickles", "Make Kerala Fish Curry", "Make Lamb Kebab",
        "Make French Fries", "Use Rice Cooker To Cook Rice", "Make Pizza", "Make Youtiao",
        "Make Salmon", "Smash Garlic", "Make Pancakes",
    ),
    "Electrical Appliance": (
        "Replace Graphics Card", "Replace Light Socket", "Replace Electrical Outlet",
        "Replace Memory Chip", "Use Soy Milk Maker", "Change Toner Cartridge",
        "Replace Laptop Screen", "Replace Refrigerator Water Filter", "Use Vending Machine",
        "Replace Filter For Air Purifier", "Replace Hard Disk", "Replace Blade Of A Saw",
        "Refill Cartridge", "Clean Laptop Keyboard", "Arc Weld", "Install Ceiling Fan",
        "Replace A Bulb", "Paste Screen Protector On Pad", "Assemble Desktop PC",
        "Use Sewing Machine",
    ),
    "Science and Craft": (
        "Prepare Standard Solution", "Make Flower Press", "Use Volumetric Pipette",
        "Hang Wallpaper", "Make Candle", "Make Soap", "Use Triple Beam Balance",
        "Make Flower Crown", "Use Volumetric Flask", "Paste Car Sticker", "Make Slime With Glue",
        "Make Paper Dice", "Wrap Gift Box", "Set Up A Hamster Cage", "Use Analytical Balance",
    ),
    "Drink and Snack": (
        "Make Meringue", "Make Salad", "Make Lemonade", "Make Taco Salad", "Make Tea",
        "Make Chocolate", "Make a Latte", "Make Homemade Ice Cream", "Make Jello Shots",
        "Make Coffee", "Make Cocktail", "Make Cookie", "Make Irish Coffee", "Roast Chestnut",
        "Make Banana Ice Cream", "Make Orange Juice", "Make Matcha Tea",
        "Make Sugar Coated Haws", "Make Strawberry Smoothie", "Make Hummus",
    ),
    "Vehicle": (
        "Change Bike Chain", "Replace Car Fuse", "Replace Rearview Mirror Glass",
        "Tie Boat To Dock", "Pump Up Bicycle Tire", "Change Car Tire", "Use Jack",
        "Remove Scratches From Windshield", "Jack Up a Car", "Change Bike Tires",
        "Install License Plate Frame", "Fuel Car", "Replace A Wiper Head",
        "Install Bicycle Rack", "Replace Tyre Valve Stem", "Change a Tire",
        "Patch Bike Inner Tube", "Polish Car", "Replace Car Window", "Add Oil to Your Car",
        "Park Parallel",
    ),
    "Housework": (
        "Put On Quilt Cover", "Clean Bath tub", "Wash Dish", "Clean Leather Seat",
        "Pack Sleeping Bag", "Clean Wooden Floor", "Clean Toilet", "Iron Clothes", "Drill Hole",
        "Remove Crayon From Walls", "Clean Hamster Cage", "Make Bed",
        "Unclog Sink With Baking Soda", "Clean Rusty Pot", "Clean Cement Floor",
    ),
    "Sport": (
        "Practise Karate", "Wear Shin Guards", "Practise Triple Jump", "Throw Hammer",
        "Play Curling", "Practise Skiing Aerials", "Practise Pole Vault",
        "Attend N B A Skills Challenge", "Glue Ping Pong Rubber", "Practise Weight Lift",
    ),
    "Gadgets": (
        "Open A Lock With Paperclips", "Replace Mobile Screen Protector", "Load Grease Gun",
        "Change Mobile Phone Battery", "Replace Sewing Machine Needle", "Change Battery Of Watch",
        "Replace SIM Card", "Resize Watch Band", "Replace CD Drive With SSD",
        "Refill Mechanical Pencils", "Make Wireless Earbuds", "Refill Fountain Pen",
        "Refill A Lighter", "Rewrap Battery", "Replace Battery On Key To Car",
        "Fix Laptop Screen Scratches", "Operate Fire Extinguisher",
        "Replace Battery On TV Control", "Use Tapping Gun", "Refill A Stapler",
        "Make RJ45 Cable",
    ),
}  # fmt: skip

#: the topics Table 6 marks as CrossTask's (the 18 primary tasks)
CROSSTASK_TOPICS: tuple[str, ...] = (
    "Build Simple Floating Shelves", "Make Kimchi Fried Rice", "Grill Steak", "Make French Toast",
    "Make French Strawberry Cake", "Make Bread and Butter Pickles", "Make Kerala Fish Curry",
    "Make Pancakes", "Make Meringue", "Make Lemonade", "Make Taco Salad", "Make a Latte",
    "Make Jello Shots", "Make Irish Coffee", "Make Banana Ice Cream", "Jack Up a Car",
    "Change a Tire", "Add Oil to Your Car",
)  # fmt: skip

#: the category given to a topic that Table 6 does not list (counted in the build report)
UNKNOWN_CATEGORY = "Unknown"

_NOT_KEY = re.compile(r"[^a-z0-9]")
#: word boundaries of a CamelCase class: aB, a1 / 1B (letters and digits), and ABc (an acronym
#: followed by a word: "NBASkills" -> "NBA Skills")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z0-9])|(?<=[0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def topic_key(topic: str) -> str:
    """The key that matches a topic to Table 6: lowercase letters and digits only."""
    return _NOT_KEY.sub("", topic.lower())


_BY_KEY: dict[str, tuple[str, str]] = {
    topic_key(t): (t, category) for category, topics in TABLE6.items() for t in topics
}


def split_camel_case(name: str) -> str:
    """A CamelCase class as words ("MakeRJ45Cable" -> "Make RJ45 Cable"); names with spaces
    are returned as they are."""
    if " " in name.strip():
        return " ".join(name.split())
    return _CAMEL.sub(" ", name.strip())


def topic_name(task: str) -> str:
    """The topic of a COIN class or CrossTask title: Table 6's spelling when the table has it,
    else the name split into words."""
    known = _BY_KEY.get(topic_key(task))
    return known[0] if known else split_camel_case(task)


def category_of(topic: str) -> str | None:
    """The Table 6 category of a topic (matched by `topic_key`), or None if the table lacks it."""
    known = _BY_KEY.get(topic_key(topic))
    return known[1] if known else None
