"""Evaluation sets for retrieval ranking: short documents and questions about them.

Written for EdgeDesk's evaluation (not taken from a benchmark). Each question targets
exactly one document:

- ``PARAPHRASE``: the question says it in other words, sharing at most a word or two
  (and common ones: "how", "the", "keeps") with its document; vector search's home turf.
- ``IDENTIFIERS``: questions naming error codes, part numbers, commands and people's
  names, over documents that read alike otherwise; keyword search's home turf.
- ``CHINESE``: short Chinese documents and questions that say it in other words, as a
  Chinese user asks (sharing a noun or two, not the sentence). MiniLM knows little
  Chinese, so here the vector half is the weak one and must not drag hybrid down.

Hybrid search must do at least as well as the better of its two halves on each.
"""

from __future__ import annotations

Case = tuple[str, str, str]  # (document name, document text, question)

PARAPHRASE: list[Case] = [
    (
        "bees",
        "Honey bees turn flower nectar into honey by evaporating its water and adding "
        "enzymes inside the hive; the comb cells are then capped with wax.",
        "How do those buzzing insects make their sweet food?",
    ),
    (
        "tides",
        "The Moon's gravity pulls the oceans into bulges, so coastlines see two high "
        "waters and two low waters roughly every day.",
        "Why does the sea rise and fall on the shore twice daily?",
    ),
    (
        "vaccines",
        "A vaccine trains the immune system by showing it a harmless piece of a "
        "pathogen, so antibodies are ready before a real infection.",
        "How can a jab prepare the body's defences against germs?",
    ),
    (
        "sourdough",
        "Sourdough bread is leavened by a starter of wild yeast and lactic acid "
        "bacteria that is fed flour and water for days.",
        "What makes tangy loaves rise without packaged baker's yeast?",
    ),
    (
        "thermos",
        "A vacuum flask keeps drinks hot because the empty space between its two "
        "walls stops heat moving by conduction and convection.",
        "How does an insulated bottle stop coffee from cooling down?",
    ),
    (
        "rainbow",
        "Sunlight entering raindrops is refracted, reflected inside and dispersed, "
        "splitting white light into its band of colours.",
        "Why do colourful arcs appear in the sky after showers?",
    ),
    (
        "compost",
        "Garden waste becomes compost as fungi, bacteria and worms break it down; "
        "turning the heap adds the oxygen they need.",
        "How do kitchen scraps and leaves turn into rich soil?",
    ),
    (
        "passwords",
        "Use a long passphrase that is unique for each site and keep it in a "
        "password manager; enable two-factor login where offered.",
        "What is the safest way to protect my online accounts?",
    ),
    (
        "jetlag",
        "Crossing time zones leaves the body clock out of step with local daylight; "
        "morning light and a regular sleep time help it adjust.",
        "How can a traveller recover faster after a long flight east?",
    ),
    (
        "bicycle",
        "To fix a flat tyre, remove the wheel, lever the tyre off, find the hole in "
        "the inner tube and glue a patch over it.",
        "How do I repair a punctured cycle wheel at the roadside?",
    ),
    (
        "photosynthesis",
        "Plants capture sunlight with chlorophyll and use its energy to turn "
        "carbon dioxide and water into sugar, releasing oxygen.",
        "How do green leaves make their own food?",
    ),
    (
        "earthquakes",
        "Earthquakes happen when stress on a fault makes rock slip suddenly, "
        "sending seismic waves through the ground.",
        "What causes the ground to shake violently?",
    ),
    (
        "coffee",
        "Espresso is brewed by forcing hot water at high pressure through finely "
        "ground, tightly packed coffee for about thirty seconds.",
        "How is a strong, small shot of that morning drink prepared?",
    ),
    (
        "budget",
        "List your monthly income, subtract fixed bills, then give every remaining "
        "pound a job such as savings, food or fun.",
        "How should I plan what to do with my salary?",
    ),
    (
        "glaciers",
        "Glaciers form where more snow falls than melts; the snow compacts into "
        "ice that slowly flows downhill under its own weight.",
        "How do rivers of ice come to exist in the mountains?",
    ),
    (
        "sleep",
        "Adults need seven to nine hours of rest; a dark, cool bedroom and no screens "
        "before bed improve its quality.",
        "How much shut-eye should a grown-up get, and how to get better nights?",
    ),
    (
        "volcano",
        "Magma rises through cracks in the crust; when gas pressure builds, it "
        "erupts as lava, ash and volcanic bombs.",
        "Why do some mountains spew molten rock?",
    ),
    (
        "recycling",
        "Rinse plastic bottles and tins, flatten cardboard, and keep food waste "
        "out of the recycling bin to avoid contaminating it.",
        "How should rubbish be prepared before it is collected for reuse?",
    ),
    (
        "memory",
        "Spaced repetition schedules reviews at growing intervals, just before you "
        "would forget, which makes facts stick for longer.",
        "What study technique helps me remember things for years?",
    ),
    (
        "batteries",
        "Lithium-ion cells last longer if kept between twenty and eighty percent "
        "charge and away from heat.",
        "How can I make my phone's power pack survive more years?",
    ),
]

IDENTIFIERS: list[Case] = [
    (
        "e4417",
        "Error E-4417 means the printer's fuser did not reach temperature; switch "
        "the printer off for ten minutes and try again.",
        "What does E-4417 mean?",
    ),
    (
        "e4471",
        "Error E-4471 means the paper tray sensor is blocked; remove the tray and "
        "clear any torn paper.",
        "What does E-4471 mean?",
    ),
    (
        "e5102",
        "Error E-5102 means the toner cartridge is not recognised; reseat it or "
        "fit a genuine cartridge.",
        "printer shows E-5102",
    ),
    (
        "p7731",
        "Part P-7731 is the replacement drive belt for the Model 3 washing machine.",
        "Which appliance is P-7731 for?",
    ),
    (
        "p7713",
        "Part P-7713 is the replacement door seal for the Model 3 washing machine.",
        "Which appliance is P-7713 for?",
    ),
    (
        "rsync",
        "Run rsync with --archive and --delete to mirror a folder to a backup disk.",
        "how to use rsync --delete",
    ),
    (
        "robocopy",
        "Run robocopy with /MIR to mirror a folder to a backup disk on Windows.",
        "robocopy /MIR",
    ),
    (
        "okafor",
        "Dr Amara Okafor leads the cardiology ward on the third floor.",
        "Where does Okafor work?",
    ),
    (
        "lindqvist",
        "Dr Henrik Lindqvist leads the neurology ward on the fourth floor.",
        "Where does Lindqvist work?",
    ),
    ("zx81", "The ZX81 computer shipped in 1981 with one kilobyte of memory.", "ZX81 memory size"),
    (
        "cpc464",
        "The CPC464 computer shipped in 1984 with sixty-four kilobytes of memory.",
        "CPC464 memory size",
    ),
    (
        "vlan42",
        "VLAN 42 carries the guest Wi-Fi traffic and is isolated from the office.",
        "what is on VLAN 42",
    ),
    (
        "vlan24",
        "VLAN 24 carries the security cameras and is isolated from the office.",
        "what is on VLAN 24",
    ),
    (
        "invoice",
        "Invoice INV-2024-0917 was paid by bank transfer on 3 October.",
        "when was INV-2024-0917 paid",
    ),
    (
        "invoice2",
        "Invoice INV-2024-0971 is still unpaid and a reminder was sent.",
        "status of INV-2024-0971",
    ),
]

CHINESE: list[Case] = [
    (
        "bees",
        "蜜蜂把采来的花蜜带回蜂巢，扇动翅膀让水分蒸发，再加入酶，酿成蜂蜜后用蜂蜡封住巢房。",
        "那些嗡嗡叫的小虫子是怎么做出甜甜的蜜的？",
    ),
    (
        "tides",
        "月球的引力把海水拉成隆起，所以海岸每天大约会出现两次涨潮和两次落潮。",
        "为什么海边的水一天要涨落两回？",
    ),
    (
        "vaccine",
        "疫苗让免疫系统先认识病原体无害的一部分，真正感染时身体已经准备好了抗体。",
        "打预防针为什么能让人不容易生病？",
    ),
    (
        "thermos",
        "保温杯的内外两层之间是真空，热量无法通过传导和对流散失，所以水能保持很久的热度。",
        "为什么杯子里的热水放一整天还是烫的？",
    ),
    (
        "rainbow",
        "阳光射入雨滴后发生折射和反射，白光被分解成不同颜色，于是天空出现彩虹。",
        "下完雨天上那道七彩的弧是怎么来的？",
    ),
    (
        "compost",
        "厨余和落叶在真菌、细菌和蚯蚓的分解下变成堆肥，经常翻动肥堆可以补充氧气。",
        "剩菜叶子怎样变成种花用的肥料？",
    ),
    (
        "password",
        "每个网站使用不同的长密码，交给密码管理器保存，并尽量开启两步验证。",
        "怎样才能让我的网上账号不被盗？",
    ),
    (
        "jetlag",
        "跨越多个时区后，生物钟和当地的昼夜不同步；早上多晒太阳、按时睡觉有助于调整。",
        "坐长途飞机去国外以后怎么倒时差？",
    ),
    (
        "bicycle",
        "自行车爆胎时，先拆下车轮，撬开外胎，找到内胎上的破洞，再涂胶贴上补丁。",
        "单车轮胎被扎破了，在路边该怎么补？",
    ),
    (
        "photosynthesis",
        "植物用叶绿素吸收阳光，把二氧化碳和水转化为糖，同时释放出氧气。",
        "绿叶是怎样给自己制造养分的？",
    ),
    (
        "earthquake",
        "断层上积累的应力使岩石突然错动，地震波由此传遍地面，造成地震。",
        "大地为什么会剧烈摇晃？",
    ),
    (
        "espresso",
        "意式浓缩咖啡是用高压热水快速穿过压实的细咖啡粉，大约三十秒就萃取完成。",
        "早上喝的那一小杯很浓的咖啡是怎么做出来的？",
    ),
    (
        "budget",
        "先列出每月收入，减去房租水电等固定开支，再把剩下的钱分给储蓄、吃饭和娱乐。",
        "工资发下来以后该怎么计划着花？",
    ),
    (
        "glacier",
        "在降雪多于融化的地方，积雪被压实成冰，冰川在自身重量下缓慢向山下流动。",
        "高山上那些会流动的冰河是怎么形成的？",
    ),
    (
        "sleep",
        "成年人每晚需要七到九小时睡眠，卧室保持黑暗凉爽、睡前不看手机能提高睡眠质量。",
        "大人一晚上该睡多久，怎么睡得更好？",
    ),
    (
        "volcano",
        "岩浆沿着地壳裂缝上升，气体压力积累到一定程度就喷发出熔岩和火山灰。",
        "有些山为什么会喷出滚烫的石头？",
    ),
    (
        "recycling",
        "塑料瓶和易拉罐要冲洗干净，纸箱压扁，厨余不要放进可回收垃圾桶。",
        "扔瓶子和纸盒之前要做些什么处理？",
    ),
    (
        "memory",
        "间隔重复法在快要遗忘之前安排复习，间隔越来越长，知识就记得更牢。",
        "有什么学习方法能让背过的东西很多年都不忘？",
    ),
    (
        "battery",
        "锂电池的电量保持在百分之二十到八十之间，并远离高温，寿命会更长。",
        "怎样让手机电池多用几年？",
    ),
    ("tea", "绿茶不发酵，用八十度左右的水冲泡，水太烫会把茶叶泡苦。", "泡绿茶用开水为什么会发苦？"),
    (
        "dumplings",
        "包饺子时，面皮要擀得中间厚边缘薄，馅料不要太多，捏紧边缘煮的时候才不会破。",
        "怎样包的饺子下锅煮不会散开？",
    ),
    (
        "subway",
        "地铁早晚高峰时段人最多，错峰出行或选择靠近车厢两端的位置会宽松一些。",
        "上下班时坐地铁太挤，有什么办法？",
    ),
]

SETS: dict[str, list[Case]] = {
    "paraphrase": PARAPHRASE,
    "identifiers": IDENTIFIERS,
    "chinese": CHINESE,
}
