"""Evaluation sets for retrieval ranking: short documents and questions about them.

Written for EdgeDesk's evaluation (not taken from a benchmark). Each question targets
exactly one document:

- ``PARAPHRASE``: the question says it in other words, sharing at most a word or two
  (and common ones: "how", "the", "keeps") with its document; vector search's home turf.
- ``IDENTIFIERS``: questions naming error codes, part numbers, commands and people's
  names, over documents that read alike otherwise; keyword search's home turf.

Hybrid search must do at least as well as the better of its two halves on each.
"""

from __future__ import annotations

Case = tuple[str, str, str]  # (document name, document text, question)

PARAPHRASE: list[Case] = [
    ("bees", "Honey bees turn flower nectar into honey by evaporating its water and adding "
     "enzymes inside the hive; the comb cells are then capped with wax.",
     "How do those buzzing insects make their sweet food?"),
    ("tides", "The Moon's gravity pulls the oceans into bulges, so coastlines see two high "
     "waters and two low waters roughly every day.",
     "Why does the sea rise and fall on the shore twice daily?"),
    ("vaccines", "A vaccine trains the immune system by showing it a harmless piece of a "
     "pathogen, so antibodies are ready before a real infection.",
     "How can a jab prepare the body's defences against germs?"),
    ("sourdough", "Sourdough bread is leavened by a starter of wild yeast and lactic acid "
     "bacteria that is fed flour and water for days.",
     "What makes tangy loaves rise without packaged baker's yeast?"),
    ("thermos", "A vacuum flask keeps drinks hot because the empty space between its two "
     "walls stops heat moving by conduction and convection.",
     "How does an insulated bottle stop coffee from cooling down?"),
    ("rainbow", "Sunlight entering raindrops is refracted, reflected inside and dispersed, "
     "splitting white light into its band of colours.",
     "Why do colourful arcs appear in the sky after showers?"),
    ("compost", "Garden waste becomes compost as fungi, bacteria and worms break it down; "
     "turning the heap adds the oxygen they need.",
     "How do kitchen scraps and leaves turn into rich soil?"),
    ("passwords", "Use a long passphrase that is unique for each site and keep it in a "
     "password manager; enable two-factor login where offered.",
     "What is the safest way to protect my online accounts?"),
    ("jetlag", "Crossing time zones leaves the body clock out of step with local daylight; "
     "morning light and a regular sleep time help it adjust.",
     "How can a traveller recover faster after a long flight east?"),
    ("bicycle", "To fix a flat tyre, remove the wheel, lever the tyre off, find the hole in "
     "the inner tube and glue a patch over it.",
     "How do I repair a punctured cycle wheel at the roadside?"),
    ("photosynthesis", "Plants capture sunlight with chlorophyll and use its energy to turn "
     "carbon dioxide and water into sugar, releasing oxygen.",
     "How do green leaves make their own food?"),
    ("earthquakes", "Earthquakes happen when stress on a fault makes rock slip suddenly, "
     "sending seismic waves through the ground.",
     "What causes the ground to shake violently?"),
    ("coffee", "Espresso is brewed by forcing hot water at high pressure through finely "
     "ground, tightly packed coffee for about thirty seconds.",
     "How is a strong, small shot of that morning drink prepared?"),
    ("budget", "List your monthly income, subtract fixed bills, then give every remaining "
     "pound a job such as savings, food or fun.",
     "How should I plan what to do with my salary?"),
    ("glaciers", "Glaciers form where more snow falls than melts; the snow compacts into "
     "ice that slowly flows downhill under its own weight.",
     "How do rivers of ice come to exist in the mountains?"),
    ("sleep", "Adults need seven to nine hours of rest; a dark, cool bedroom and no screens "
     "before bed improve its quality.",
     "How much shut-eye should a grown-up get, and how to get better nights?"),
    ("volcano", "Magma rises through cracks in the crust; when gas pressure builds, it "
     "erupts as lava, ash and volcanic bombs.",
     "Why do some mountains spew molten rock?"),
    ("recycling", "Rinse plastic bottles and tins, flatten cardboard, and keep food waste "
     "out of the recycling bin to avoid contaminating it.",
     "How should rubbish be prepared before it is collected for reuse?"),
    ("memory", "Spaced repetition schedules reviews at growing intervals, just before you "
     "would forget, which makes facts stick for longer.",
     "What study technique helps me remember things for years?"),
    ("batteries", "Lithium-ion cells last longer if kept between twenty and eighty percent "
     "charge and away from heat.",
     "How can I make my phone's power pack survive more years?"),
]

IDENTIFIERS: list[Case] = [
    ("e4417", "Error E-4417 means the printer's fuser did not reach temperature; switch "
     "the printer off for ten minutes and try again.", "What does E-4417 mean?"),
    ("e4471", "Error E-4471 means the paper tray sensor is blocked; remove the tray and "
     "clear any torn paper.", "What does E-4471 mean?"),
    ("e5102", "Error E-5102 means the toner cartridge is not recognised; reseat it or "
     "fit a genuine cartridge.", "printer shows E-5102"),
    ("p7731", "Part P-7731 is the replacement drive belt for the Model 3 washing machine.",
     "Which appliance is P-7731 for?"),
    ("p7713", "Part P-7713 is the replacement door seal for the Model 3 washing machine.",
     "Which appliance is P-7713 for?"),
    ("rsync", "Run rsync with --archive and --delete to mirror a folder to a backup disk.",
     "how to use rsync --delete"),
    ("robocopy", "Run robocopy with /MIR to mirror a folder to a backup disk on Windows.",
     "robocopy /MIR"),
    ("okafor", "Dr Amara Okafor leads the cardiology ward on the third floor.",
     "Where does Okafor work?"),
    ("lindqvist", "Dr Henrik Lindqvist leads the neurology ward on the fourth floor.",
     "Where does Lindqvist work?"),
    ("zx81", "The ZX81 computer shipped in 1981 with one kilobyte of memory.",
     "ZX81 memory size"),
    ("cpc464", "The CPC464 computer shipped in 1984 with sixty-four kilobytes of memory.",
     "CPC464 memory size"),
    ("vlan42", "VLAN 42 carries the guest Wi-Fi traffic and is isolated from the office.",
     "what is on VLAN 42"),
    ("vlan24", "VLAN 24 carries the security cameras and is isolated from the office.",
     "what is on VLAN 24"),
    ("invoice", "Invoice INV-2024-0917 was paid by bank transfer on 3 October.",
     "when was INV-2024-0917 paid"),
    ("invoice2", "Invoice INV-2024-0971 is still unpaid and a reminder was sent.",
     "status of INV-2024-0971"),
]

SETS: dict[str, list[Case]] = {"paraphrase": PARAPHRASE, "identifiers": IDENTIFIERS}
